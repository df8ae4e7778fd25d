/**
 * Regression tests of the audit's item 9 (issue #15): unbounded device state, non-http urls,
 * answers kept by caches, no request timeout. The live stream part is in test/live/standing.test.ts.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { subscribe } from '../helpers/live.js';

let t: TestApp;
let g: string;
let admin: TestUser;
let operator: TestUser;
beforeAll(async () => {
  // Short timeouts: an ordinary body has 1 s, an upload 2 s.
  t = await setup({ config: { timeouts: { requestMs: 1000, uploadMs: 2000, idleMs: 0 } } });
  g = await newGroup(t);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  operator = await newUser(t, { groupId: g, role: 'operator' });
});
afterAll(async () => t?.close());

async function waitFor<T>(what: string, f: () => T | undefined | false, deadlineMs = 30_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('trip update message url accepts javascript: (audit 9b)', () => {
  const put = (url: string) =>
    inject(t, {
      method: 'PUT', url: `/api/v4/groups/${g}/trip-updates`, headers: operator.auth,
      payload: { update_id: `u${Math.random().toString(36).slice(2)}`, kind: 'message', route_id: 'R1', start_date: '2026-03-10', end_date: '2026-03-10', message: { header: 'Works', url } },
    });

  it('refuses every scheme but http and https with a 422 naming body.message.url', async () => {
    for (const url of ['javascript:alert(1)', 'JavaScript:alert(document.cookie)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)', 'file:///etc/passwd', 'ftp://example.org/x', 'http:/no-host', 'https://']) {
      const r = await put(url);
      expect(r.status, url).toBe(422);
      expect(r.json.detail.map((d: { loc: unknown[] }) => d.loc), url).toContainEqual(['body', 'message', 'url']);
    }
  });

  it('still accepts http and https urls (the refusals above are not a reference error)', async () => {
    for (const url of ['https://example.org/works?line=1#a', 'HTTP://EXAMPLE.ORG/']) {
      const r = await put(url);
      // The route R1 is unknown in this group (no GTFS): a 422 about route_id, never about the url.
      expect(r.json.detail?.map?.((d: { loc: unknown[] }) => d.loc.join('.')) ?? [], url).not.toContain('body.message.url');
    }
  });

  it('documents the allowed schemes in the OpenAPI schema of the field', async () => {
    const doc = (await inject(t, { url: '/api/v4/openapi/internal.json' })).json;
    const text = JSON.stringify(doc);
    expect(text).toContain('An http:// or https:// URL');
  });
});

describe('no Cache-Control: no-store on login and authenticated answers (audit 9c)', () => {
  it('login and login-scoped answers carry no-store, failed or not', async () => {
    const user = await newUser(t, { groupId: g, role: 'reader', password: 'a long password 1' });
    for (const url of ['/api/v4/login', `/api/v4/login-scoped?scopes=read&expire=${Math.floor(Date.now() / 1000) + 86_400}`, '/api/v2/login']) {
      const ok = await inject(t, { method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `email=${encodeURIComponent(user.email)}&password=a%20long%20password%201` });
      expect(ok.status, url).toBe(200);
      expect(ok.headers['cache-control'], url).toBe('no-store');
      const bad = await inject(t, { method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `email=${encodeURIComponent(user.email)}&password=wrong%20password` });
      expect(bad.status, url).toBe(401);
      expect(bad.headers['cache-control'], url).toBe('no-store');
    }
  });

  it('every answer of an authenticated operation carries no-store, cached reads and errors included', async () => {
    const vehicles = `/api/v4/groups/${g}/vehicles`;
    for (const [url, headers, status] of [
      [vehicles, admin.auth, 200],
      [vehicles, admin.auth, 200], // a second time: the answer cache's hit
      [vehicles, {}, 401],
      [`/api/v4/groups/${g}/users`, operator.auth, 403],
      ['/api/v4/groups', admin.auth, 200],
      ['/api/v4/logout', admin.auth, 204],
    ] as [string, Record<string, string>, number][]) {
      const r = await inject(t, { url, headers });
      expect(r.status, url).toBe(status);
      expect(r.headers['cache-control'], `${url} ${status}`).toBe('no-store');
    }
  });

  it('public answers keep their own caching: the feeds keep ETag, Last-Modified and public max-age', async () => {
    const feed = await inject(t, { url: `/api/v4/groups/${g}/gtfs-rt/alerts` });
    expect(feed.status).toBe(200);
    expect(feed.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    expect(feed.headers['etag']).toBeDefined();
    expect(feed.headers['last-modified']).toBeDefined();
    const again = await inject(t, { url: `/api/v4/groups/${g}/gtfs-rt/alerts`, headers: { 'if-none-match': String(feed.headers['etag']) } });
    expect(again.status).toBe(304);
    // A public answer is public even when the caller sends a credential (it is not read).
    const withCredential = await inject(t, { url: `/api/v4/groups/${g}/gtfs-rt/alerts`, headers: admin.auth });
    expect(withCredential.headers['cache-control']).toBe(feed.headers['cache-control']);
  });
});

/** A raw client: sends `head` and waits; resolves with what the server answered once it closes or answers. */
function rawClient(port: number) {
  const socket: Socket = tcpConnect(port, '127.0.0.1');
  const state = { data: '', ended: false };
  socket.on('data', (d) => (state.data += String(d)));
  socket.on('error', () => (state.ended = true));
  socket.on('end', () => (state.ended = true));
  socket.on('close', () => (state.ended = true));
  return { socket, state };
}

describe('no request timeout: a slow body stayed open (audit 9d)', () => {
  it('the timeouts are configured by REQUEST_TIMEOUT_SECONDS, UPLOAD_TIMEOUT_SECONDS and IDLE_TIMEOUT_SECONDS', () => {
    expect(loadConfig({}).timeouts).toEqual({ requestMs: 60_000, uploadMs: 900_000, idleMs: 300_000 });
    expect(loadConfig({ REQUEST_TIMEOUT_SECONDS: '5', UPLOAD_TIMEOUT_SECONDS: '60', IDLE_TIMEOUT_SECONDS: '0' }).timeouts).toEqual({ requestMs: 5000, uploadMs: 60_000, idleMs: 0 });
    expect(() => loadConfig({ REQUEST_TIMEOUT_SECONDS: '120', UPLOAD_TIMEOUT_SECONDS: '60' })).toThrow(/UPLOAD_TIMEOUT_SECONDS must be at least REQUEST_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ REQUEST_TIMEOUT_SECONDS: '0' })).toThrow(/REQUEST_TIMEOUT_SECONDS/);
  });

  it('a request whose body never completes is answered 408 or closed', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    const c = rawClient(port);
    c.socket.write('POST /api/v4/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email": "slow');
    await waitFor('the server to answer 408 or close', () => c.state.ended || /RequestTimeout/.test(c.state.data));
    expect(c.state.data).toMatch(/^HTTP\/1\.1 408 .*"code":"RequestTimeout"/s);
    c.socket.destroy();
  });

  it('an upload whose body never completes is closed too (its own, longer bound)', async () => {
    const { port } = t.app.server.address() as { port: number };
    const c = rawClient(port);
    c.socket.write(`POST /api/v4/groups/${g}/gtfs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${admin.auth['authorization']}\r\nContent-Type: application/zip\r\nContent-Length: 100000\r\n\r\nPK`);
    await waitFor('the server to close the upload', () => c.state.ended || /^HTTP\/1\.1 408/.test(c.state.data));
    c.socket.destroy();
  });

  it('headers that never complete are closed too', async () => {
    const { port } = t.app.server.address() as { port: number };
    const c = rawClient(port);
    c.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    await waitFor('the server to close', () => c.state.ended || /^HTTP\/1\.1 408/.test(c.state.data));
    c.socket.destroy();
  });

  it('a request whose body arrives in time is answered as usual', async () => {
    const { port } = t.app.server.address() as { port: number };
    const r = await fetch(`http://127.0.0.1:${port}/api/v4/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'nobody@example.org', password: 'wrong password' }) });
    expect(r.status).toBe(401);
  });

  it('the live stream outlives the request and upload timeouts after its upgrade', async () => {
    const s = await subscribe(t.app, g, operator.auth);
    // Past both bounds and several of Node's checks (every 250 ms here).
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(s.ws.readyState).toBe(s.ws.OPEN);
    // And it still works both ways: a ping is answered.
    const pong = new Promise<void>((resolve) => s.ws.once('pong', () => resolve()));
    s.ws.ping();
    await pong;
    s.ws.close();
  });
});
