/**
 * An open live stream follows what its credential is worth now, not what it was worth when it
 * opened: a superuser flag taken away (from the account, or from the creator of the key it
 * subscribed with) and a JWT past its `exp` end the stream's access, as they end a request's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newUser, setup, type TestApp } from '../helpers/app.js';
import { signToken, startProvider, type TestProvider } from '../helpers/oidc.js';
import { closeOf, subscribe, type Stream } from '../helpers/live.js';

const clock = fixedClock('2026-03-10T07:00:00Z');
const DOMAIN = 'standing.example.test';
const AUDIENCE = 'https://api.transit-ops.test';
let t: TestApp;
let provider: TestProvider;
let g: string;
let delegated: string;
const open: Stream[] = [];

beforeAll(async () => {
  provider = await startProvider([DOMAIN]);
  // A short heartbeat: a JWT's expiry is no database change, the heartbeat's check is what sees it.
  t = await setup({ clock, config: { oidcIssuerTemplate: provider.template, oidcJwksCooldownMs: 0, live: { allowedOrigins: [], maxBufferedBytes: 1_048_576, heartbeatMs: 300, authTimeoutMs: 5000, batchMs: 50 } } });
  g = await newGroup(t);
  delegated = await newGroup(t, { auth: { provider: 'auth0', domain: DOMAIN, connection: 'staff', audience: AUDIENCE } });
});
afterAll(async () => {
  for (const s of open) s.ws.close();
  await t?.close();
  provider?.close();
});

const sub = async (group: string, headers: Record<string, string>) => {
  const s = await subscribe(t.app, group, headers);
  open.push(s);
  return s;
};

describe('an open live stream and the credential it opened with', () => {
  it('a superuser with no role in the group loses the stream (4403 NoRole) once the account is no longer a superuser', async () => {
    const su = await newUser(t, { superuser: true });
    const s = await sub(g, su.auth);
    // As an operator's script or another instance would: the flag changes behind the API.
    await t.db.query('UPDATE users SET superuser = false WHERE user_id = $1', [su.userId]);
    expect(await closeOf(s)).toEqual({ code: 4403, reason: 'NoRole' });
  });

  it('a stream opened with a superuser key loses its access (4403) once the key\'s creator is no longer a superuser', async () => {
    const creator = await newUser(t, { superuser: true });
    const screen = await newUser(t, { superuser: true });
    const made = await inject(t, { method: 'POST', url: '/api/v4/api-keys', headers: creator.auth, payload: { user_id: screen.userId } });
    expect(made.status).toBe(201);
    const s = await sub(g, { 'x-api-key': made.json.value as string });
    await t.db.query('UPDATE users SET superuser = false WHERE user_id = $1', [creator.userId]);
    expect(await closeOf(s)).toEqual({ code: 4403, reason: 'NoRole' });
  });

  it('a stream opened with a JWT closes with 4401 once the token\'s exp has passed (service clock)', async () => {
    const operator = await newUser(t, { groupId: delegated, role: 'operator', email: 'night-shift@example.org' });
    const exp = Math.floor(clock.now().getTime() / 1000) + 600;
    const token = await signToken(provider, { iss: provider.issuerOf(DOMAIN), aud: AUDIENCE, email: operator.email, exp });
    const s = await sub(delegated, { authorization: `Bearer ${token}` });
    clock.advance(5 * 60_000);
    // Still valid after several heartbeats' checks: nothing else closes it.
    const early = await Promise.race([s.closed, new Promise((r) => setTimeout(() => r('open'), 1500))]);
    expect(early).toBe('open');
    clock.advance(6 * 60_000);
    expect(await closeOf(s)).toEqual({ code: 4401, reason: 'Unauthenticated' });
  });
});
