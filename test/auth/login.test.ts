import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newUser, setup, type TestApp } from '../helpers/app.js';

const clock = fixedClock('2026-03-10T08:00:00Z');
let t: TestApp;
let g: string;
beforeAll(async () => {
  t = await setup({ clock, config: { loginMaxFailuresPerAccountAddress: 3, loginMaxFailuresPerAddress: 1000, loginFailureWindowSeconds: 600 } });
  g = await newGroup(t);
});
afterAll(async () => t?.close());

const form = (email: string, password: string) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams({ email, password }).toString(),
});
const login = (email: string, password: string, query = '', path = '/api/v4/login', remoteAddress = '127.0.0.1') =>
  inject(t, { method: 'POST', url: `${path}${query}`, remoteAddress, ...form(email, password) });

describe('POST /login', () => {
  it('opens a session returned in the body and as a secure cookie', async () => {
    const u = await newUser(t, { groupId: g, role: 'reader', password: 'reader password 1' });
    const r = await login(u.email, 'reader password 1');
    expect(r.status).toBe(200);
    expect(r.json.expires_days).toBe(14);
    expect(r.json.session_id).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const cookie = String(r.headers['set-cookie']);
    expect(cookie).toContain(`session_id=${r.json.session_id}`);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('Secure');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain(`Max-Age=${14 * 86400}`);
    // the secret is stored only hashed
    const stored = await t.db.query<{ session_hash: string }>('SELECT session_hash FROM sessions');
    expect(stored.some((s) => s.session_hash === r.json.session_id)).toBe(false);

    const byBearer = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: { authorization: `Bearer ${r.json.session_id}` } });
    expect(byBearer.status).toBe(200);
    expect(byBearer.json).toEqual([{ group_id: g, user_id: u.userId, email: u.email, organization: 'Test Org', role: 'reader', teams: [] }]);
    const byCookie = await inject(t, { url: `/api/v4/groups/${g}/roles`, cookies: { session_id: r.json.session_id } });
    expect(byCookie.status).toBe(200);
  });

  it('answers a wrong password and an unknown email the same way, after the same work (fastest of 5 each, within 5×)', async () => {
    const time = async (email: string) => {
      const start = process.hrtime.bigint();
      const r = await login(email, 'not the right one');
      return { r, ms: Number(process.hrtime.bigint() - start) / 1e6 };
    };
    // Interleaved, one account per wrong password (the throttle answers 429 after 3 failures of
    // one account), and the fastest of each kind compared: a loaded machine slows some logins,
    // but the fastest is near the work itself.
    const wrong: Awaited<ReturnType<typeof time>>[] = [];
    const unknown: Awaited<ReturnType<typeof time>>[] = [];
    for (let i = 0; i < 5; i++) {
      const u = await newUser(t, { groupId: g, role: 'reader', password: 'the right one' });
      wrong.push(await time(u.email));
      unknown.push(await time(`nobody${i}@example.org`));
    }
    for (const r of [...wrong, ...unknown]) expect(r.r.status).toBe(401);
    expect(unknown[0]!.r.json).toEqual(wrong[0]!.r.json);
    expect(wrong[0]!.r.json.code).toBe('WrongLogin');
    // both verify an argon2 hash: neither answers in a fraction of the other's time
    const fastest = (rs: { ms: number }[]) => Math.min(...rs.map((r) => r.ms));
    expect(fastest(unknown) / fastest(wrong)).toBeGreaterThan(0.2);
    expect(fastest(unknown) / fastest(wrong)).toBeLessThan(5);
  });

  it('accepts JSON as well as the form body, and validates it', async () => {
    const missing = await inject(t, { method: 'POST', url: '/api/v4/login', ...form('', '') });
    expect(missing.status).toBe(422);
    const noPassword = await inject(t, { method: 'POST', url: '/api/v4/login', payload: { email: 'a@b.c' } });
    expect(noPassword.status).toBe(422);
    expect(noPassword.json.detail[0]).toMatchObject({ loc: ['body', 'password'], type: 'missing' });
  });

  it('limits failed attempts per account and address with 429 and Retry-After, then lets the user in again', async () => {
    const u = await newUser(t, { groupId: g, role: 'reader', password: 'patient password' });
    for (let i = 0; i < 3; i++) expect((await login(u.email, 'guess')).status).toBe(401);
    const limited = await login(u.email, 'patient password');
    expect(limited.status).toBe(429);
    expect(limited.json.code).toBe('TooManyLoginAttempts');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(600);
    // Another address is not concerned (audit #15, item 6).
    expect((await login(u.email, 'patient password', '', '/api/v4/login', '198.51.100.77')).status).toBe(200);
    clock.advance(601_000);
    expect((await login(u.email, 'patient password')).status).toBe(200);
  });

  it('refuses password login to users whose groups are delegated to OpenID Connect', async () => {
    const delegated = await newGroup(t, { auth: { provider: 'auth0', domain: 'login.example.org', connection: 'corp', audience: 'https://api.example.org' } });
    const u = await newUser(t, { groupId: delegated, role: 'operator', password: 'delegated password' });
    const r = await login(u.email, 'delegated password');
    expect(r.status).toBe(403);
    expect(r.json.code).toBe('Auth0LoginRequired');
    expect((await login(u.email, 'wrong')).json.code).toBe('WrongLogin');
  });

  it('opens a driver session bound to a device of the user\'s group', async () => {
    const other = await newGroup(t);
    const u = await newUser(t, { groupId: g, role: 'driver', password: 'driver password' });
    await t.db.query('INSERT INTO memberships (group_id, user_id, role) VALUES ($1, $2, $3)', [other, u.userId, 'driver']);
    await t.db.query('INSERT INTO devices (group_id, device_id, label) VALUES ($1, $2, $3)', [g, 'tablet-7', 'Tablet 7']);
    expect((await login(u.email, 'driver password', '?device_id=unknown')).json.code).toBe('DeviceNotFound');
    const r = await login(u.email, 'driver password', '?device_id=tablet-7');
    expect(r.status).toBe(200);
    const rows = await t.db.query<any>('SELECT device_group_id, device_id FROM sessions WHERE device_id IS NOT NULL');
    expect(rows).toEqual([{ device_group_id: g, device_id: 'tablet-7' }]);
    const auth = { authorization: `Bearer ${r.json.session_id}` };
    expect((await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: auth })).status).toBe(200);
    const elsewhere = await inject(t, { url: `/api/v4/groups/${other}/roles`, headers: auth });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json.code).toBe('NoRole');
  });
});

describe('POST /login-scoped', () => {
  it('requires scopes and expire', async () => {
    const u = await newUser(t, { groupId: g, role: 'reader', password: 'scoped password' });
    const r = await login(u.email, 'scoped password', '', '/api/v4/login-scoped');
    expect(r.status).toBe(422);
    const locs = r.json.detail.map((d: any) => d.loc.join('.'));
    expect(locs).toContain('query.scopes');
    expect(locs).toContain('query.expire');
    const badScope = await login(u.email, 'scoped password', '?scopes=everything&expire=2026-03-11', '/api/v4/login-scoped');
    expect(badScope.status).toBe(422);
    expect(badScope.json.detail[0].loc).toEqual(['query', 'scopes', 0]);
  });

  it('accepts the five expire forms and refuses anything else', async () => {
    const u = await newUser(t, { groupId: g, role: 'reader', password: 'scoped password' });
    const now = clock.now().getTime();
    const inOneDay = new Date(now + 86_400_000);
    const pad = (n: number) => String(n).padStart(2, '0');
    const d = inOneDay;
    const forms: [string, number][] = [
      [`${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`, inOneDay.getTime()],
      [`${pad(d.getUTCDate())}/${pad(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`, inOneDay.getTime()],
      [String(Math.floor(inOneDay.getTime() / 1000)), Math.floor(inOneDay.getTime() / 1000) * 1000],
      [`${Math.floor(inOneDay.getTime() / 1000)}.5`, Math.floor(inOneDay.getTime() / 1000) * 1000 + 500],
      [`${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`, Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())],
    ];
    for (const [expire, at] of forms) {
      const r = await login(u.email, 'scoped password', `?scopes=read&expire=${encodeURIComponent(expire)}`, '/api/v4/login-scoped');
      expect(r.status, `${expire}: ${r.body}`).toBe(200);
      expect(new Date(r.json.expires_at).getTime()).toBe(at);
      expect(r.json.expires_days).toBeCloseTo((at - now) / 86_400_000, 3);
    }
    for (const bad of ['tomorrow', '2026-13-01', '31/02/2026 10:00:00', '2026-03-11T25:00:00', '2026-03-11T10:00:00+02:00', '2020-01-01']) {
      const r = await login(u.email, 'scoped password', `?scopes=read&expire=${encodeURIComponent(bad)}`, '/api/v4/login-scoped');
      expect(r.status, bad).toBe(422);
      expect(r.json.detail[0].loc).toEqual(['query', 'expire']);
    }
  });

  it('bounds the session to its scopes and kills it at expire, on both paths', async () => {
    const u = await newUser(t, { groupId: g, role: 'reader', password: 'scoped password' });
    for (const path of ['/api/v4/login-scoped', '/nav-data-processor-api/v4/login-scoped']) {
      const expire = Math.floor(clock.now().getTime() / 1000) + 3600;
      const r = await login(u.email, 'scoped password', `?scopes=export&expire=${expire}`, path);
      expect(r.status).toBe(200);
      const auth = { authorization: `Bearer ${r.json.session_id}` };
      const read = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: auth });
      expect(read.status).toBe(403);
      expect(read.json.code).toBe('ScopeNotAllowed');
      const exp = await inject(t, { url: `/api/v4/groups/${g}/export/drivers`, headers: auth });
      expect([200, 501]).toContain(exp.status);
      clock.advance(3601_000);
      const dead = await inject(t, { url: `/api/v4/groups/${g}/export/drivers`, headers: auth });
      expect(dead.status).toBe(401);
      expect(dead.json.code).toBe('Unauthenticated');
    }
  });
});

describe('GET /logout', () => {
  it('closes the session everywhere and answers 204', async () => {
    const u = await newUser(t, { groupId: g, role: 'reader', password: 'logout password' });
    const s = (await login(u.email, 'logout password')).json.session_id;
    const out = await inject(t, { url: '/api/v4/logout', cookies: { session_id: s } });
    expect(out.status).toBe(204);
    expect(out.body).toBe('');
    expect(String(out.headers['set-cookie'])).toContain('session_id=;');
    expect((await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: { authorization: `Bearer ${s}` } })).status).toBe(401);
    expect((await inject(t, { url: `/api/v4/groups/${g}/roles`, cookies: { session_id: s } })).status).toBe(401);
    expect((await inject(t, { url: '/api/v4/logout' })).status).toBe(401);
  });
});

describe('GET /auth/provider', () => {
  it('tells legacy from delegated groups', async () => {
    expect((await inject(t, { url: '/api/v4/auth/provider' })).json).toEqual({ provider: 'legacy' });
    expect((await inject(t, { url: `/api/v4/auth/provider?group_id=${g}` })).json).toEqual({ provider: 'legacy' });
    const delegated = await newGroup(t, { auth: { provider: 'auth0', domain: 'tenant.example.org', connection: 'staff', audience: 'aud' } });
    expect((await inject(t, { url: `/api/v4/auth/provider?group_id=${delegated}` })).json).toEqual({ provider: 'auth0', auth0: { domain: 'tenant.example.org', connection: 'staff' } });
    const unknown = await inject(t, { url: '/api/v4/auth/provider?group_id=nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe('GroupNotFound');
  });
});

describe('login throttling (audit #15, item 6: anyone could lock any account)', () => {
  // Small limits: 3 failures per (account, address), 8 per address, 6 per account; a 600 s window.
  const tclock = fixedClock('2026-03-11T08:00:00Z');
  let a: TestApp;
  let group: string;
  beforeAll(async () => {
    a = await setup({
      clock: tclock,
      config: { loginMaxFailuresPerAccountAddress: 3, loginMaxFailuresPerAddress: 8, loginMaxFailuresPerAccount: 6, loginFailureWindowSeconds: 600 },
    });
    group = await newGroup(a);
  });
  afterAll(async () => a?.close());
  const from = (address: string, email: string, password: string, path = '/api/v4/login', query = '') =>
    inject(a, { method: 'POST', url: `${path}${query}`, remoteAddress: address, ...form(email, password) });
  const retryAfter = (r: { headers: Record<string, unknown> }) => Number(r.headers['retry-after']);

  it('wrong passwords for an account from many addresses do not lock it: the right password from a clean address opens a session on every login path', async () => {
    const victim = await newUser(a, { groupId: group, role: 'reader', password: 'victim password' });
    // Eight addresses fail once each: the account is under attack, and those addresses are refused for it.
    for (let i = 1; i <= 8; i++) expect((await from(`203.0.113.${i}`, victim.email, 'guess')).status).toBe(401);
    expect((await from('203.0.113.1', victim.email, 'guess')).status).toBe(429);
    expect((await from('198.51.100.10', victim.email, 'victim password')).status).toBe(200);
    const expire = Math.floor(tclock.now().getTime() / 1000) + 3600;
    expect((await from('198.51.100.11', victim.email, 'victim password', '/api/v4/login-scoped', `?scopes=read&expire=${expire}`)).status).toBe(200);
    expect((await from('198.51.100.12', victim.email, 'victim password', '/nav-data-processor-api/v4/login-scoped', `?scopes=read&expire=${expire}`)).status).toBe(200);
    // A success from one address does not lift the attack for the others.
    expect((await from('203.0.113.2', victim.email, 'victim password')).status).toBe(429);
  });

  it('an (account, address) pair gets 429 with Retry-After after its failures, the right password included; other addresses and accounts are not concerned', async () => {
    const u = await newUser(a, { groupId: group, role: 'reader', password: 'pair password' });
    const other = await newUser(a, { groupId: group, role: 'reader', password: 'other password' });
    const pair = '203.0.113.20';
    for (let i = 0; i < 3; i++) {
      expect((await from(pair, u.email, 'guess')).status).toBe(401);
      tclock.advance(10_000);
    }
    // The right password from the throttled pair is refused too, unchecked: a 200 would tell the guesser it was right.
    const limited = await from(pair, u.email, 'pair password');
    expect(limited.status).toBe(429);
    expect(limited.json.code).toBe('TooManyLoginAttempts');
    expect(limited.json.detail).toContain('for this account from your address');
    // The oldest of the three failures, 30 s ago, leaves the window in 570 s.
    expect(retryAfter(limited)).toBe(570);
    expect((await from(pair, other.email, 'other password')).status).toBe(200);
    expect((await from('198.51.100.20', u.email, 'pair password')).status).toBe(200);
    tclock.advance(570_000);
    expect((await from(pair, u.email, 'pair password')).status).toBe(200);
  });

  it('the attacking address gets 429 for every account after the per-address limit, whatever the password', async () => {
    const u = await newUser(a, { groupId: group, role: 'reader', password: 'spray password' });
    const spray = '203.0.113.30';
    for (let i = 0; i < 8; i++) {
      expect((await from(spray, `sprayed${i}@example.org`, 'Winter2026!')).status).toBe(401);
      tclock.advance(1000);
    }
    const limited = await from(spray, u.email, 'spray password');
    expect(limited.status).toBe(429);
    expect(limited.json.detail).toContain('from your address');
    expect(retryAfter(limited)).toBe(592);
    // Logging in to an account of its own does not reset the address's count.
    expect((await from('198.51.100.30', u.email, 'spray password')).status).toBe(200);
    tclock.advance(592_000);
    expect((await from(spray, u.email, 'spray password')).status).toBe(200);
  });

  it('an account under attack refuses, for it, any address that has failed on it once, until the attack leaves the window', async () => {
    const u = await newUser(a, { groupId: group, role: 'reader', password: 'attacked password' });
    for (let i = 1; i <= 5; i++) expect((await from(`203.0.113.${40 + i}`, u.email, 'guess')).status).toBe(401);
    // Five failures: not yet under attack, an address that failed once may try again.
    expect((await from('203.0.113.41', u.email, 'guess')).status).toBe(401);
    tclock.advance(60_000);
    // Six: under attack. 203.0.113.42 failed once, 60 s ago, and is refused even with the right password.
    const limited = await from('203.0.113.42', u.email, 'attacked password');
    expect(limited.status).toBe(429);
    expect(limited.json.detail).toContain('receiving many failed logins');
    // Lifted when the account falls under 6 failures: the first five leave the window in 540 s.
    expect(retryAfter(limited)).toBe(540);
    // A clean address still gets in.
    expect((await from('198.51.100.40', u.email, 'attacked password')).status).toBe(200);
    tclock.advance(540_000);
    expect((await from('203.0.113.42', u.email, 'attacked password')).status).toBe(200);
  });

  it('a success forgets the failures of the pair, not those of the address, and the table keeps one window of failures', async () => {
    const u = await newUser(a, { groupId: group, role: 'reader', password: 'typo password' });
    const home = '203.0.113.50';
    for (let i = 0; i < 2; i++) expect((await from(home, u.email, 'typo pasword')).status).toBe(401);
    expect((await from(home, u.email, 'typo password')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await from(home, u.email, 'typo pasword')).status).toBe(401);
    expect((await from(home, u.email, 'typo password')).status).toBe(200);
    const rows = await a.db.query<{ key: string; n: number }>('SELECT key, count(*)::int AS n FROM login_failures WHERE key LIKE $1 GROUP BY key ORDER BY key', [`%${home}%`]);
    expect(rows).toEqual([{ key: `address:${home}`, n: 4 }]);
    tclock.advance(601_000);
    expect((await from(home, 'nobody@example.org', 'guess')).status).toBe(401);
    const left = await a.db.query<{ n: number }>('SELECT count(*)::int AS n FROM login_failures');
    expect(left).toEqual([{ n: 3 }]);
  });
});
