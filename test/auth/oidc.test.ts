/**
 * OpenID Connect end to end: a key pair made here, a JWKS served on loopback, tokens signed by
 * the test and verified by the service (signature, iss, aud, exp/nbf, algorithms, key rotation).
 */
import { createServer, type Server } from 'node:http';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOidcDomain, isPrivateAddress } from '../../src/domains/auth/oidc.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let server: Server;
let issuer: string;
let keys: { kid: string; privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']; jwk: JWK }[] = [];
let fetches = 0;
let g: string;
let legacy: string;
let operator: TestUser;
const DOMAIN = 'tenant.example.test';
const AUDIENCE = 'https://api.transit-ops.test';

async function newKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

beforeAll(async () => {
  keys = [await newKey('k1')];
  server = createServer((req, res) => {
    if (req.url === `/${DOMAIN}/.well-known/jwks.json`) {
      fetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: keys.map((k) => k.jwk) }));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  const template = `http://127.0.0.1:${port}/{domain}/`;
  issuer = template.replace('{domain}', DOMAIN);
  t = await setup({ config: { oidcIssuerTemplate: template, oidcJwksCooldownMs: 0 } });
  g = await newGroup(t, { auth: { provider: 'auth0', domain: DOMAIN, connection: 'staff', audience: AUDIENCE } });
  legacy = await newGroup(t);
  operator = await newUser(t, { groupId: g, role: 'operator', email: 'dispatch@example.org', password: 'dispatch password' });
  await t.db.query("INSERT INTO memberships (group_id, user_id, role) VALUES ($1, $2, 'reader')", [legacy, operator.userId]);
});
afterAll(async () => {
  await t?.close();
  server?.close();
});

const sign = (o: { key?: (typeof keys)[number]; iss?: string; aud?: string; email?: string; exp?: number | string; nbf?: number; alg?: string } = {}) => {
  const key = o.key ?? keys[0]!;
  let jwt = new SignJWT({ email: o.email ?? operator.email }).setProtectedHeader({ alg: o.alg ?? 'RS256', kid: key.kid }).setIssuer(o.iss ?? issuer).setAudience(o.aud ?? AUDIENCE).setIssuedAt().setExpirationTime(o.exp ?? '10m');
  if (o.nbf) jwt = jwt.setNotBefore(o.nbf);
  return jwt.sign(key.privateKey);
};
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
    const claims = { iss: issuer, aud: AUDIENCE, email: operator.email, exp: Math.floor(Date.now() / 1000) + 600 };
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    expect((await roles(none)).status).toBe(401);
    const secret = new TextEncoder().encode(JSON.stringify(keys[0]!.jwk));
    const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'k1' }).sign(secret);
    expect((await roles(hs)).status).toBe(401);
  });

  it('refetches the JWKS when a new key id appears (rotation)', async () => {
    const before = fetches;
    keys = [await newKey('k2'), ...keys];
    const r = await roles(await sign({ key: keys[0] }));
    expect(r.status).toBe(200);
    expect(fetches).toBeGreaterThan(before);
  });

  it('does not let a token of one group into a legacy group, nor a password session into the delegated one', async () => {
    const r = await roles(await sign(), legacy);
    expect(r.status).toBe(401);
    const pw = await roles(operator.token);
    expect(pw.status).toBe(403);
    expect(pw.json.code).toBe('Auth0LoginRequired');
    expect((await roles(operator.token, legacy)).status).toBe(200);
  });

  it('refuses OpenID Connect domains that point at internal addresses (SSRF)', async () => {
    expect(await checkOidcDomain('127.0.0.1', false)).toContain('IP address');
    expect(await checkOidcDomain('localhost', false)).toContain('public host name');
    expect(await checkOidcDomain('metadata.internal', false)).toContain('public host name');
    expect(await checkOidcDomain('localhost', true)).toBeNull();
    for (const ip of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '127.0.0.1', '::1', 'fd00::1', '::ffff:10.0.0.1']) expect(isPrivateAddress(ip), ip).toBe(true);
    for (const ip of ['8.8.8.8', '151.101.1.1', '2001:4860::8888']) expect(isPrivateAddress(ip), ip).toBe(false);
  });
});
