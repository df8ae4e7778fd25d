/** The live stream: credentials at connection or by first message, close codes, Origin. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, hostPrincipal, wholeGroup } from '../../src/domains/auth/service.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { connect, subscribe } from '../helpers/live.js';

let t: TestApp;
let g: string;
let reader: TestUser;
beforeAll(async () => {
  t = await setup({ config: { live: { allowedOrigins: ['https://ops.example.org'], maxBufferedBytes: 1_048_576, heartbeatMs: 30_000, authTimeoutMs: 1000, batchMs: 50 } } });
  g = await newGroup(t);
  reader = await newUser(t, { groupId: g, role: 'reader' });
});
afterAll(async () => t?.close());

describe('live stream credentials', () => {
  it('accepts a bearer session, an API key, the session_id cookie, or a first message', async () => {
    const bearer = await subscribe(t.app, g, reader.auth);
    expect(bearer.received[0]).toMatchObject({ type: 'subscribed', group_id: g, data: { role: 'reader', teams: null } });

    const key = await createApiKey(t.ctx, hostPrincipal, wholeGroup(g), { role: 'regulator', group_ids: [g] });
    const byKey = await subscribe(t.app, g, { authorization: `Api-Key ${key.value}` });
    expect(byKey.received[0]!.data).toMatchObject({ role: 'regulator' });
    const byKeyHeader = await subscribe(t.app, g, { 'x-api-key': key.value });
    expect(byKeyHeader.received[0]!.data).toMatchObject({ role: 'regulator' });

    const byCookie = await subscribe(t.app, g, { cookie: `session_id=${reader.token}` });
    expect(byCookie.received[0]!.data).toMatchObject({ role: 'reader' });

    const byMessage = await connect(t.app, g);
    byMessage.ws.send(JSON.stringify({ session_id: reader.token }));
    expect((await byMessage.next()).type).toBe('subscribed');
    for (const s of [bearer, byKey, byKeyHeader, byCookie, byMessage]) s.ws.close();
  });

  it('closes 4401 without a credential in time, on a bad first message, or an invalid credential', async () => {
    const silent = await connect(t.app, g);
    expect(await silent.closed).toEqual({ code: 4401, reason: 'Unauthenticated' });
    expect(silent.received).toEqual([expect.objectContaining({ type: 'error', data: expect.objectContaining({ code: 'Unauthenticated' }) })]);

    for (const first of ['hello', JSON.stringify({ token: reader.token }), JSON.stringify({ session_id: 'not-a-session' })]) {
      const s = await connect(t.app, g);
      s.ws.send(first);
      expect((await s.closed).code, first).toBe(4401);
    }
    const badHeader = await connect(t.app, g, { headers: { authorization: 'Bearer not-a-session' } });
    expect(await badHeader.closed).toEqual({ code: 4401, reason: 'Unauthenticated' });

    const loggedOut = await newUser(t, { groupId: g, role: 'reader' });
    await t.db.query('UPDATE sessions SET ended_at = now() WHERE user_id = $1', [loggedOut.userId]);
    const ended = await connect(t.app, g, { headers: { cookie: `session_id=${loggedOut.token}` } });
    expect((await ended.closed).code).toBe(4401);
  });

  it('closes 4403 for a role not allowed or no role in the group, 4404 for an unknown group', async () => {
    const driver = await newUser(t, { groupId: g, role: 'driver' });
    const d = await connect(t.app, g, { headers: driver.auth });
    expect(await d.closed).toEqual({ code: 4403, reason: 'SubscribeEventsRoleRequired' });

    const outsider = await newUser(t, { groupId: await newGroup(t), role: 'admin' });
    const o = await connect(t.app, g, { headers: outsider.auth });
    expect(await o.closed).toEqual({ code: 4403, reason: 'NoRole' });
    const byMessage = await connect(t.app, g);
    byMessage.ws.send(JSON.stringify({ session_id: outsider.token }));
    expect(await byMessage.closed).toEqual({ code: 4403, reason: 'NoRole' });

    const unknown = await connect(t.app, 'no-such-group', { headers: reader.auth });
    expect(await unknown.closed).toEqual({ code: 4404, reason: 'GroupNotFound' });
  });

  it('refuses a browser Origin that is not allowed, before the upgrade', async () => {
    await expect(connect(t.app, g, { headers: reader.auth, origin: 'https://evil.example' })).rejects.toMatchObject({ status: 403 });
    const allowed = await connect(t.app, g, { headers: reader.auth, origin: 'https://ops.example.org' });
    expect((await allowed.next()).type).toBe('subscribed');
    allowed.ws.close();
    // The service's own pages (the live map): the Origin names the host the browser connects to.
    const { port } = t.app.server.address() as { port: number };
    const own = await connect(t.app, g, { headers: reader.auth, origin: `http://127.0.0.1:${port}` });
    expect((await own.next()).type).toBe('subscribed');
    own.ws.close();
    await expect(connect(t.app, g, { headers: reader.auth, origin: `http://127.0.0.1:${port + 1}` })).rejects.toMatchObject({ status: 403 });
  });

  it('answers 426 to a plain HTTP request, and the usual 401 and 403 before that', async () => {
    const plain = await inject(t, { url: `/api/v4/groups/${g}/events/op/subscribe`, headers: reader.auth });
    expect(plain.status).toBe(426);
    expect(plain.json.code).toBe('UpgradeRequired');
    expect((await inject(t, { url: `/api/v4/groups/${g}/events/op/subscribe` })).status).toBe(401);
  });

  it('is documented in the internal OpenAPI document', async () => {
    const doc = (await inject(t, { url: '/api/v4/openapi/internal.json' })).json;
    const operation = doc.paths['/api/v4/groups/{group_id}/events/op/subscribe'].get;
    expect(operation.operationId).toBe('subscribeEvents');
    expect(operation.description).toContain('4401');
    expect(operation.description).toContain('4429');
    expect(operation.responses['403'].description).toContain('OriginNotAllowed');
    expect(Object.keys(operation.responses)).toContain('101');
  });
});

describe('live stream configuration', () => {
  it('reads LIVE_ALLOWED_ORIGINS as a list of origins and refuses anything else', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(loadConfig({ LIVE_ALLOWED_ORIGINS: 'https://ops.example.org, http://localhost:5173' }).live.allowedOrigins).toEqual(['https://ops.example.org', 'http://localhost:5173']);
    expect(loadConfig({}).live).toEqual({ allowedOrigins: [], maxBufferedBytes: 1_048_576, heartbeatMs: 30_000, authTimeoutMs: 5000, batchMs: 100 });
    expect(loadConfig({ LIVE_BATCH_MS: '250' }).live.batchMs).toBe(250);
    expect(() => loadConfig({ LIVE_BATCH_MS: '0' })).toThrow(/LIVE_BATCH_MS/);
    expect(() => loadConfig({ LIVE_ALLOWED_ORIGINS: 'https://ops.example.org/app' })).toThrow(/LIVE_ALLOWED_ORIGINS="https:\/\/ops.example.org\/app": each entry must be an origin/);
    expect(() => loadConfig({ LIVE_ALLOWED_ORIGINS: 'ops.example.org' })).toThrow(/LIVE_ALLOWED_ORIGINS/);
    expect(() => loadConfig({ LIVE_MAX_BUFFERED_BYTES: '10' })).toThrow(/LIVE_MAX_BUFFERED_BYTES="10": must be at least 4096/);
  });
});
