/**
 * OpenID Connect end to end: a key pair made here, a JWKS served on loopback, tokens signed by
 * the test and verified by the service (signature, iss, aud, exp/nbf, algorithms, key rotation).
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { checkOidcDomain, guardedLookup, isPrivateAddress, jwksFetch, PrivateAddressError, type ResolveAll } from '../../src/domains/auth/oidc.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { newKey, signToken, startProvider, type SigningKey, type TestProvider } from '../helpers/oidc.js';

let t: TestApp;
let provider: TestProvider;
let issuer: string;
let g: string;
let legacy: string;
let operator: TestUser;
/** An account of the delegated group that also holds a role in a legacy group, with a password. */
let mixed: TestUser;
const DOMAIN = 'tenant.example.test';
const AUDIENCE = 'https://api.transit-ops.test';

beforeAll(async () => {
  provider = await startProvider([DOMAIN]);
  issuer = provider.issuerOf(DOMAIN);
  t = await setup({ config: { oidcIssuerTemplate: provider.template, oidcJwksCooldownMs: 0 } });
  g = await newGroup(t, { auth: { provider: 'auth0', domain: DOMAIN, connection: 'staff', audience: AUDIENCE } });
  legacy = await newGroup(t);
  // An account made for the delegated group: no password, a role there only.
  operator = await newUser(t, { groupId: g, role: 'operator', email: 'dispatch@example.org' });
  mixed = await newUser(t, { groupId: g, role: 'operator', email: 'both@example.org', password: 'both password' });
  await t.db.query("INSERT INTO memberships (group_id, user_id, role) VALUES ($1, $2, 'reader')", [legacy, mixed.userId]);
});
afterAll(async () => {
  await t?.close();
  provider?.close();
});

const sign = (o: { key?: SigningKey; iss?: string; aud?: string; email?: string; exp?: number | string; nbf?: number; alg?: string } = {}) =>
  signToken(provider, { ...o, iss: o.iss ?? issuer, aud: o.aud ?? AUDIENCE, email: o.email ?? operator.email });
const roles = (token: string, group = g) => inject(t, { url: `/api/v4/groups/${group}/roles`, headers: { authorization: `Bearer ${token}` } });

describe('OpenID Connect', () => {
  it('accepts a token signed by the issuer, for the group\'s audience, mapping the email to the user', async () => {
    const r = await roles(await sign());
    expect(r.status).toBe(200);
    expect(r.json[0]).toMatchObject({ user_id: operator.userId, role: 'operator' });
    const groups = await inject(t, { url: '/api/v4/groups', headers: { authorization: `Bearer ${await sign()}` } });
    expect(groups.status).toBe(200);
  });

  it('refuses a wrong audience, a wrong issuer, an expired or not-yet-valid token, and an unknown email', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const token of [
      await sign({ aud: 'https://someone-else' }),
      await sign({ iss: 'https://evil.example/' }),
      await sign({ exp: now - 120 }),
      await sign({ nbf: now + 3600 }),
      await sign({ email: 'stranger@example.org' }),
    ]) {
      const r = await roles(token);
      expect(r.status).toBe(401);
      expect(r.json.code).toBe('Unauthenticated');
    }
  });

  it('never accepts alg none, nor an HMAC token keyed with the public key', async () => {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const claims = { iss: issuer, aud: AUDIENCE, sub: 'auth0|none', email: operator.email, exp: Math.floor(Date.now() / 1000) + 600 };
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    expect((await roles(none)).status).toBe(401);
    const secret = new TextEncoder().encode(JSON.stringify(provider.keys[0]!.jwk));
    const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'k1' }).sign(secret);
    expect((await roles(hs)).status).toBe(401);
  });

  it('refetches the JWKS when a new key id appears (rotation)', async () => {
    const before = provider.fetches;
    provider.keys = [await newKey('k2'), ...provider.keys];
    const r = await roles(await sign({ key: provider.keys[0] }));
    expect(r.status).toBe(200);
    expect(provider.fetches).toBeGreaterThan(before);
  });

  it('does not let a token of one group into a legacy group, nor a password session into the delegated one', async () => {
    const r = await roles(await sign(), legacy);
    expect(r.status).toBe(401);
    const pw = await roles(mixed.token);
    expect(pw.status).toBe(403);
    expect(pw.json.code).toBe('Auth0LoginRequired');
    expect((await roles(mixed.token, legacy)).status).toBe(200);
  });

  it('refuses OpenID Connect domains that point at internal addresses (SSRF)', async () => {
    expect(await checkOidcDomain('127.0.0.1', false)).toContain('IP address');
    expect(await checkOidcDomain('localhost', false)).toContain('public host name');
    expect(await checkOidcDomain('metadata.internal', false)).toContain('public host name');
    expect(await checkOidcDomain('localhost', true)).toBeNull();
    for (const ip of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '127.0.0.1', '::1', 'fd00::1', '::ffff:10.0.0.1']) expect(isPrivateAddress(ip), ip).toBe(true);
    // The whole of each range and its other spellings (fe80::/10 is not only fe80::, ::ffff:7f00:1 is 127.0.0.1).
    for (const ip of ['0.0.0.0', '100.64.0.1', '255.255.255.255', '::', 'fe90::1', 'febf::1', 'fec0::1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', 'not an address']) expect(isPrivateAddress(ip), ip).toBe(true);
    for (const ip of ['8.8.8.8', '151.101.1.1', '2001:4860::8888', '172.32.0.1', '::ffff:8.8.8.8']) expect(isPrivateAddress(ip), ip).toBe(false);
  });
});

describe('audit #15 item 2: a JWT must expire', () => {
  it('refuses a token signed by the issuer without exp (401)', async () => {
    const noExp = await signToken(provider, { iss: issuer, aud: AUDIENCE, email: operator.email, exp: null });
    const r = await roles(noExp);
    expect(r.status).toBe(401);
    expect(r.json.code).toBe('Unauthenticated');
    expect((await roles(await sign())).status).toBe(200);
  });
});

describe('audit #15 item 10: OpenID Connect domains are checked when the JWKS is fetched, not when saved', () => {
  const stub = (table: Record<string, string[]>): ResolveAll => async (host) => {
    const ips = table[host];
    if (!ips) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return ips.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const lookupOf = (resolve: ResolveAll, host: string, options: { all?: boolean; family?: number } = {}) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number | undefined }>((ok) => {
      guardedLookup(resolve)(host, options, (err, address, family) => ok({ err, address, family }));
    });

  it('saving a well-formed public domain that does not resolve works offline (POST and PATCH)', async () => {
    const strict = await setup({ config: { oidcAllowPrivateHosts: false } });
    try {
      const su = await newUser(strict, { superuser: true });
      // .invalid is reserved (RFC 2606): it never resolves, as with DNS down.
      const auth = { provider: 'auth0', domain: 'tenant.transit-ops-audit.invalid', connection: 'staff', audience: AUDIENCE };
      const created = await inject(strict, { method: 'POST', url: '/api/v4/groups', headers: su.auth, payload: { group_id: 'offline-idp', name: 'Offline', features: [], auth, timezone: 'Europe/Paris' } });
      expect(created.status, created.body).toBe(201);
      expect(created.json.auth).toMatchObject({ provider: 'auth0', domain: auth.domain });
      const patched = await inject(strict, { method: 'PATCH', url: '/api/v4/groups/offline-idp', headers: su.auth, payload: { auth: { ...auth, domain: 'other.transit-ops-audit.invalid' } } });
      expect(patched.status, patched.body).toBe(200);
      expect(patched.json.auth.domain).toBe('other.transit-ops-audit.invalid');
      // What needs no DNS is still refused when saved.
      for (const domain of ['10.0.0.1', 'localhost', 'idp.local', 'metadata.internal']) {
        const r = await inject(strict, { method: 'PATCH', url: '/api/v4/groups/offline-idp', headers: su.auth, payload: { auth: { ...auth, domain } } });
        expect(r.status, domain).toBe(422);
        expect(r.json.detail[0].loc, domain).toEqual(['body', 'auth', 'domain']);
      }
    } finally {
      await strict.close();
    }
  });

  it('the connection lookup refuses a name resolving to a private, loopback or link-local address and returns the addresses it checked', async () => {
    const resolve = stub({
      'idp.example.org': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
      'rebound.example.org': ['127.0.0.1'],
      'mixed.example.org': ['93.184.216.34', '169.254.169.254'],
      'v6-private.example.org': ['fd00::5'],
    });
    const all = await lookupOf(resolve, 'idp.example.org', { all: true });
    expect(all.err).toBeNull();
    expect(all.address).toEqual([{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 }]);
    const one = await lookupOf(resolve, 'idp.example.org', { family: 6 });
    expect(one).toEqual({ err: null, address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 });
    for (const host of ['rebound.example.org', 'mixed.example.org', 'v6-private.example.org']) {
      const r = await lookupOf(resolve, host, { all: true });
      expect(r.err, host).toBeInstanceOf(PrivateAddressError);
      expect(r.err!.code, host).toBe('EPRIVATEADDRESS');
    }
    expect((await lookupOf(resolve, 'nowhere.example.org')).err!.code).toBe('ENOTFOUND');
  });

  it('the JWKS fetch refuses an issuer whose host resolves to loopback, and never connects to it', async () => {
    const headers = { headers: new Headers(), method: 'GET' as const, redirect: 'manual' as const, signal: AbortSignal.timeout(5000) };
    // 'localhost' resolves to 127.0.0.1 through /etc/hosts here: the shape of a rebound name.
    const byName = `http://localhost:${provider.port}/${DOMAIN}/.well-known/jwks.json`;
    const allowed = await jwksFetch(true)(byName, headers);
    expect(allowed.status).toBe(200);
    expect(((await allowed.json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
    const before = provider.requests;
    await expect(jwksFetch(false)(byName, headers)).rejects.toBeInstanceOf(PrivateAddressError);
    await expect(jwksFetch(false)(`http://127.0.0.1:${provider.port}/${DOMAIN}/.well-known/jwks.json`, headers)).rejects.toBeInstanceOf(PrivateAddressError);
    await expect(jwksFetch(false, stub({ 'idp.example.org': ['127.0.0.1'] }))(`http://idp.example.org:${provider.port}/${DOMAIN}/.well-known/jwks.json`, headers)).rejects.toBeInstanceOf(PrivateAddressError);
    expect(provider.requests).toBe(before);

    // End to end: a group saved without DNS, its issuer reached through a name that resolves to loopback.
    const template = `http://localhost:${provider.port}/{domain}/`;
    const strict = await setup({ config: { oidcAllowPrivateHosts: false, oidcIssuerTemplate: template, oidcJwksCooldownMs: 0 } });
    try {
      const group = await newGroup(strict, { auth: { provider: 'auth0', domain: DOMAIN, connection: 'staff', audience: AUDIENCE } });
      const user = await newUser(strict, { groupId: group, role: 'operator', email: operator.email });
      const token = await sign({ iss: template.replace('{domain}', DOMAIN), email: user.email });
      const r = await inject(strict, { url: `/api/v4/groups/${group}/roles`, headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(401);
      expect(provider.requests).toBe(before);
    } finally {
      await strict.close();
    }
  });
});
