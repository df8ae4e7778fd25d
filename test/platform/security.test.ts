/** Abuse: security headers, the CORS allow-list, and the rate limits (429 with Retry-After). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let g: string;
let admin: TestUser;
let other: TestUser;
const ALLOWED = 'https://ops.example.org';

beforeAll(async () => {
  t = await setup({ config: { corsAllowedOrigins: [ALLOWED], rateLimits: { login: 3, credentials: 2, exports: 2 } } });
  g = await newGroup(t);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  other = await newUser(t, { groupId: g, role: 'admin' });
});
afterAll(async () => t?.close());

const login = (ip: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v4/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
    payload: 'email=nobody%40example.org&password=wrong-password',
  });

describe('security headers', () => {
  it('every API answer forbids sniffing, framing and cross-origin referrers, with a self-only policy', async () => {
    for (const url of ['/health', `/api/v4/groups/${g}/vehicles`, '/api/v4/no-such-route']) {
      const r = await t.app.inject({ url, headers: admin.auth });
      expect(r.headers['x-content-type-options'], url).toBe('nosniff');
      expect(r.headers['x-frame-options'], url).toBe('SAMEORIGIN');
      expect(r.headers['referrer-policy'], url).toBe('no-referrer');
      const csp = String(r.headers['content-security-policy']);
      expect(csp, url).toContain("default-src 'self'");
      expect(csp, url).toContain("frame-ancestors 'none'");
      expect(csp, url).toContain("script-src 'self'");
      expect(csp, url).not.toContain('upgrade-insecure-requests');
      expect(r.headers['strict-transport-security'], url).toMatch(/max-age=\d+/);
    }
  });

  it('the reference page carries swagger-ui\'s own policy, without upgrading plain http', async () => {
    const r = await t.app.inject({ url: '/docs' });
    expect(r.statusCode).toBe(200);
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('upgrade-insecure-requests');
  });
});

describe('CORS allow-list', () => {
  it('an allowed origin gets its preflight answered, with credentials', async () => {
    const r = await t.app.inject({
      method: 'OPTIONS',
      url: `/api/v4/groups/${g}/vehicles`,
      headers: { origin: ALLOWED, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(r.statusCode).toBe(204);
    expect(r.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(r.headers['access-control-allow-credentials']).toBe('true');
    const get = await t.app.inject({ url: `/api/v4/groups/${g}/vehicles`, headers: { ...admin.auth, origin: ALLOWED } });
    expect(get.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(String(get.headers['access-control-expose-headers'])).toContain('Link');
  });

  it('any other origin gets no CORS header, so browsers withhold the answer', async () => {
    for (const origin of ['https://evil.example.com', 'https://ops.example.org.evil.com', 'null']) {
      const r = await t.app.inject({ method: 'OPTIONS', url: `/api/v4/groups/${g}/vehicles`, headers: { origin, 'access-control-request-method': 'GET' } });
      expect(r.headers['access-control-allow-origin'], origin).toBeUndefined();
      const get = await t.app.inject({ url: `/api/v4/groups/${g}/vehicles`, headers: { ...admin.auth, origin } });
      expect(get.headers['access-control-allow-origin'], origin).toBeUndefined();
    }
  });
});

describe('rate limits', () => {
  it('login: the budget is per client address; over it, 429 TooManyRequests with Retry-After', async () => {
    for (let i = 0; i < 3; i++) expect((await login('203.0.113.7')).statusCode).toBe(401);
    const over = await login('203.0.113.7');
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ code: 'TooManyRequests' });
    expect(over.json().detail).toContain('3 per minute');
    const retry = Number(over.headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    // Another address has its own budget.
    expect((await login('203.0.113.8')).statusCode).toBe(401);
  });

  it('API key creation: the budget is per caller', async () => {
    const create = (u: TestUser) => inject(t, { method: 'POST', url: `/api/v4/groups/${g}/api-keys`, headers: u.auth, payload: { role: 'reader', group_ids: [g] } });
    expect((await create(admin)).status).toBe(201);
    expect((await create(admin)).status).toBe(201);
    const over = await create(admin);
    expect(over.status).toBe(429);
    expect(over.json.code).toBe('TooManyRequests');
    expect((await create(other)).status).toBe(201);
  });

  it('CSV exports: the budget is per caller', async () => {
    const exp = (u: TestUser, what: string) => t.app.inject({ url: `/api/v4/groups/${g}/export/${what}`, headers: u.auth });
    expect((await exp(admin, 'vehicles')).statusCode).toBe(200);
    expect((await exp(admin, 'vehicles')).statusCode).toBe(200);
    const over = await exp(admin, 'vehicles');
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBeDefined();
    expect((await exp(other, 'vehicles')).statusCode).toBe(200);
    // Ordinary reads are not limited.
    for (let i = 0; i < 5; i++) expect((await t.app.inject({ url: `/api/v4/groups/${g}/vehicles`, headers: admin.auth })).statusCode).toBe(200);
  });

  it('the limited operations document their 429', async () => {
    const doc = (await t.app.inject({ url: '/api/v4/openapi/internal.json' })).json();
    expect(Object.keys(doc.paths['/api/v4/login'].post.responses)).toContain('429');
    expect(doc.paths['/api/v4/login'].post['x-rate-limit']).toBe('login');
    expect(doc.paths['/api/v4/groups/{group_id}/api-keys'].post['x-rate-limit']).toBe('credentials');
    expect(doc.paths['/api/v4/groups/{group_id}/export/vehicles'].get['x-rate-limit']).toBe('exports');
    expect(doc.paths['/api/v4/groups/{group_id}/vehicles'].get['x-rate-limit']).toBeUndefined();
  });
});

describe('text PostgreSQL cannot hold', () => {
  it('a NUL character in the path, the query or the body is a 422 naming where it is', async () => {
    const su = await newUser(t, { superuser: true });
    const body = await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/teams`, headers: su.auth, payload: { team_id: 'nul', name: 'a\u0000b' } });
    expect(body.status).toBe(422);
    expect(body.json.detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'string_nul' });
    const query = await inject(t, { url: `/api/v4/groups/${g}/drivers?driver_code=a%00b`, headers: su.auth });
    expect(query.status).toBe(422);
    expect(query.json.detail[0].loc).toEqual(['query', 'driver_code']);
    const path = await inject(t, { url: '/api/v4/groups/a%00b/vehicles', headers: admin.auth });
    expect(path.status).toBe(422);
    expect(path.json.detail[0].loc).toEqual(['path', 'group_id']);
  });
});

describe('client address behind proxies', () => {
  it('X-Forwarded-For is believed only from a trusted proxy', async () => {
    const strict = await setup({ config: { trustProxy: false, rateLimits: { login: 1, credentials: 1, exports: 1 } } });
    try {
      const l = (ip: string) => strict.app.inject({ method: 'POST', url: '/api/v4/login', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip }, payload: 'email=a%40b.org&password=whatever1' });
      expect((await l('198.51.100.1')).statusCode).toBe(401);
      // A forged header does not buy a new budget when the peer is not a trusted proxy.
      expect((await l('198.51.100.2')).statusCode).toBe(429);
    } finally {
      await strict.close();
    }
  });
});

describe('OpenID Connect domains cannot point the server inward (SSRF)', () => {
  it('IP literals, local names and names resolving to private addresses are refused, naming the field', async () => {
    const strict = await setup({ config: { oidcAllowPrivateHosts: false } });
    try {
      const su = await newUser(strict, { superuser: true });
      for (const domain of ['127.0.0.1', '169.254.169.254', 'localhost', 'idp.localhost', 'metadata.internal', 'printer.local']) {
        const r = await inject(strict, {
          method: 'POST', url: '/api/v4/groups', headers: su.auth,
          payload: { group_id: `ssrf${Math.abs(domain.length * 7919) % 1000}`, name: 'SSRF', features: [], auth: { provider: 'auth0', domain, connection: 'c', audience: 'a' }, timezone: 'Europe/Paris' },
        });
        expect(r.status, domain).toBe(422);
        expect(r.json.detail[0].loc, domain).toEqual(['body', 'auth', 'domain']);
      }
    } finally {
      await strict.close();
    }
  });
});

describe('body limits per endpoint kind', () => {
  it('an ordinary JSON body and a CSV import each have their own limit, answered 413', async () => {
    const small = await setup({ config: { bodyLimitBytes: 2048, importBodyLimitBytes: 8192 } });
    try {
      const group = await newGroup(small);
      const a = await newUser(small, { groupId: group, role: 'admin' });
      const json = await small.app.inject({ method: 'POST', url: `/api/v4/groups/${group}/vehicles`, headers: { ...a.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ vehicle_id: 'v', comment: 'x'.repeat(4000) }) });
      expect(json.statusCode).toBe(413);
      expect(json.json().code).toBe('PayloadTooLarge');
      const header = 'id;fleet_number;license_plate;teams;comment;status;capacity';
      const csvOk = [header, ...Array.from({ length: 100 }, (_, i) => `v${i};${i};P-${i};;;active;90`)].join('\r\n');
      expect(csvOk.length).toBeGreaterThan(2048);
      expect(csvOk.length).toBeLessThan(8192);
      const fits = await small.app.inject({ method: 'POST', url: `/api/v4/groups/${group}/import/vehicles`, headers: { ...a.auth, 'content-type': 'text/csv' }, payload: csvOk });
      expect(fits.statusCode, fits.body).toBeLessThan(300);
      const csvBig = [header, ...Array.from({ length: 400 }, (_, i) => `v${i};${i};P-${i};;;active;90`)].join('\r\n');
      const over = await small.app.inject({ method: 'POST', url: `/api/v4/groups/${group}/import/vehicles`, headers: { ...a.auth, 'content-type': 'text/csv' }, payload: csvBig });
      expect(over.statusCode).toBe(413);
    } finally {
      await small.close();
    }
  });
});
