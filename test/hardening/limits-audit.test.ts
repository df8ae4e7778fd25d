/**
 * Regression tests of the audit's item 9 (issue #15): unbounded device state, non-http urls,
 * answers kept by caches, no request timeout. The live stream part is in test/live/standing.test.ts.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { OFFICE, groupRoles } from '../../src/platform/http/access.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, send } from '../helpers/actual.js';
import { minimalZip } from '../helpers/gtfs.js';
import { subscribe } from '../helpers/live.js';

let t: TestApp;
let g: string;
let admin: TestUser;
let operator: TestUser;
beforeAll(async () => {
  // Short timeouts: an ordinary body has 1 s, an upload 4 s.
  t = await setup({
    config: { timeouts: { requestMs: 1000, uploadMs: 4000, idleMs: 0 } },
    // An answer that starts after the request timeout and is written for longer than the upload
    // timeout, in pieces (as a CSV export is).
    extraRoutes: (app) => {
      // An authenticated read that carries its own validator.
      app.get('/test/groups/:group_id/etagged', { schema: { hide: true, 'x-access': groupRoles(OFFICE, 'NoRole', 'read') } as object }, async (_req, reply) =>
        reply.header('etag', 'W/"v1"').send({ ok: true }));
      app.get('/test/slow-answer', async (_req, reply) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      async function* pieces() {
        for (let i = 0; i < 10; i++) {
          yield `line ${i}\n`;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
      return reply.type('text/plain').send(Readable.from(pieces()));
      });
    },
  });
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

describe('device_state merged any number of unknown fields forever (audit 9a)', () => {
  const fields = (n: number, prefix: string, value: string | number | boolean | null = 1) => Object.fromEntries(Array.from({ length: n }, (_v, i) => [`${prefix}${i}`, value])) as Record<string, string | number | boolean | null>;
  const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
  const position = (at: Date) => item('position', at, { lat: 45.76, lon: 4.83, gps_valid: true });
  const latestState = async (deviceId: string) =>
    ((await t.db.query<{ state: Record<string, unknown> | null }>('SELECT state FROM device_latest WHERE group_id = $1 AND device_id = $2', [g, deviceId]))[0]?.state ?? {});

  it('an item over the per-item bounds is rejected alone, naming the item and the bound; the others are stored', async () => {
    const dev = await newDevice(t, g);
    const tooMany = item('device_state', minutesAgo(30), { state: fields(65, 'f') });
    const longName = item('device_state', minutesAgo(29), { state: { ['n'.repeat(65)]: 1 } });
    const longText = item('device_state', minutesAgo(28), { state: { note: 'x'.repeat(1001) } });
    const fine = item('device_state', minutesAgo(27), { state: { battery_pct: 80, custom: 'ok' } });
    const pos = position(minutesAgo(27));
    const r = await send(t, g, dev.auth, [tooMany, pos, longName, fine, longText]);
    expect(r.status).toBe(200);
    expect(r.json.accepted.sort()).toEqual([pos.id, fine.id].sort());
    expect(r.json.complete).toBe(false);
    const rejected = r.json.rejected as { index: number; id: string; errors: { loc: unknown[]; msg: string }[] }[];
    expect(rejected.map((x) => [x.index, x.id])).toEqual([[0, tooMany.id], [2, longName.id], [4, longText.id]]);
    expect(rejected[0]!.errors[0]).toMatchObject({ loc: ['state'] });
    expect(rejected[0]!.errors[0]!.msg).toMatch(/64/);
    expect(rejected[1]!.errors[0]!.loc[0]).toBe('state');
    expect(rejected[1]!.errors[0]!.msg).toMatch(/64/);
    expect(rejected[2]!.errors[0]!.loc.slice(0, 2)).toEqual(['state', 'note']);
    expect(rejected[2]!.errors[0]!.msg).toMatch(/1000/);
    expect(await latestState(dev.deviceId)).toEqual({ battery_pct: 80, custom: 'ok' });
  });

  it('the merged state keeps at most 64 fields: an item that would pass it is rejected; removing fields makes room', async () => {
    const dev = await newDevice(t, g);
    expect((await send(t, g, dev.auth, [item('device_state', minutesAgo(50), { state: fields(40, 'a') })])).json.complete).toBe(true);
    const over = item('device_state', minutesAgo(40), { state: fields(30, 'b') });
    const pos = position(minutesAgo(40));
    const r = await send(t, g, dev.auth, [over, pos]);
    expect(r.json.accepted).toEqual([pos.id]);
    expect(r.json.rejected).toEqual([{ index: 0, id: over.id, errors: [{ loc: ['state'], msg: expect.stringMatching(/70 fields, over the bound of 64/) }] }]);
    expect(Object.keys(await latestState(dev.deviceId))).toHaveLength(40);

    // The same change with 20 fields removed first fits (40 - 20 + 30 = 50).
    const room = item('device_state', minutesAgo(39), { state: fields(20, 'a', null) });
    const again = item('device_state', minutesAgo(38), { state: fields(30, 'b') });
    const ok = await send(t, g, dev.auth, [again, room]);
    expect(ok.json.accepted.sort()).toEqual([room.id, again.id].sort());
    expect(Object.keys(await latestState(dev.deviceId))).toHaveLength(50);

    // A late change (before the latest state) counts its fields as added: 50 + 20 new > 64.
    const late = item('device_state', minutesAgo(45), { state: fields(20, 'c') });
    const rl = await send(t, g, dev.auth, [late]);
    expect(rl.json.rejected[0]).toMatchObject({ index: 0, id: late.id, errors: [{ loc: ['state'], msg: expect.stringMatching(/over the bound of 64/) }] });
    // A retry of a stored change is still a duplicate, not a rejection.
    const retry = await send(t, g, dev.auth, [{ ...again }]);
    expect(retry.json).toMatchObject({ accepted: [], duplicates: [again.id], rejected: [] });
  });

  it('the merged state keeps at most 16 KiB of JSON', async () => {
    const dev = await newDevice(t, g);
    const big = (prefix: string, n: number) => Object.fromEntries(Array.from({ length: n }, (_v, i) => [`${prefix}${i}`, 'y'.repeat(1000)]));
    expect((await send(t, g, dev.auth, [item('device_state', minutesAgo(20), { state: big('a', 10) })])).json.complete).toBe(true);
    const over = item('device_state', minutesAgo(19), { state: big('b', 10) });
    const r = await send(t, g, dev.auth, [over]);
    expect(r.json.rejected).toEqual([{ index: 0, id: over.id, errors: [{ loc: ['state'], msg: expect.stringMatching(/bytes of JSON, over the bound of 16384/) }] }]);
    expect(Buffer.byteLength(JSON.stringify(await latestState(dev.deviceId)))).toBeLessThanOrEqual(16 * 1024);
  });

  it('a state stored past the bounds before they existed may still change without growing', async () => {
    const dev = await newDevice(t, g);
    // As stored before the bounds: 80 fields.
    await t.db.query('INSERT INTO device_latest (group_id, device_id, state_at, state, last_seen_at) VALUES ($1, $2, $3, $4, $3)', [g, dev.deviceId, minutesAgo(60), JSON.stringify(fields(80, 'old'))]);
    const same = item('device_state', minutesAgo(10), { state: { old0: 2 } });
    const grows = item('device_state', minutesAgo(9), { state: { new0: 1 } });
    const r = await send(t, g, dev.auth, [same, grows]);
    expect(r.json.accepted).toEqual([same.id]);
    expect(r.json.rejected).toEqual([{ index: 1, id: grows.id, errors: [{ loc: ['state'], msg: expect.stringMatching(/81 fields, over the bound of 64/) }] }]);
  });

  it('documents the bounds in the OpenAPI description of the device reports', async () => {
    const doc = (await inject(t, { url: '/api/v4/openapi/internal.json' })).json as { paths: Record<string, Record<string, { description?: string }>> };
    const description = doc.paths['/api/v4/groups/{group_id}/device/reports']?.['post']?.description ?? '';
    expect(description).toContain('at most 64 fields, of 1 to 64 characters, text values of at most 1000 characters');
    expect(description).toContain('16384 bytes of JSON');
  });
});

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
    const leaving = await newUser(t, { groupId: g, role: 'reader' });
    for (const [url, headers, status] of [
      [vehicles, admin.auth, 200],
      [vehicles, admin.auth, 200], // a second time: the answer cache's hit
      [vehicles, {}, 401],
      [`/api/v4/groups/${g}/users`, operator.auth, 403],
      ['/api/v4/groups', admin.auth, 200],
      ['/api/v4/logout', leaving.auth, 204],
    ] as [string, Record<string, string>, number][]) {
      const r = await inject(t, { url, headers });
      expect(r.status, url).toBe(status);
      expect(r.headers['cache-control'], `${url} ${status}`).toBe('no-store');
    }
  });

  it('an authenticated answer with its own ETag is private, no-cache (revalidated, never in a shared cache)', async () => {
    const r = await inject(t, { url: `/test/groups/${g}/etagged`, headers: admin.auth });
    expect(r.status).toBe(200);
    expect(r.headers['etag']).toBe('W/"v1"');
    expect(r.headers['cache-control']).toBe('private, no-cache');
    expect((await inject(t, { url: `/test/groups/${g}/etagged` })).headers['cache-control']).toBe('no-store');
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

/** The port of the app, listening on the loopback. */
async function listening(): Promise<number> {
  if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as { port: number }).port;
}

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

  it('a request whose body never completes is answered 408, with the security headers every answer carries', async () => {
    const port = await listening();
    const c = rawClient(port);
    c.socket.write('POST /api/v4/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email": "slow');
    await waitFor('the server to answer 408 or close', () => c.state.ended || /RequestTimeout/.test(c.state.data));
    expect(c.state.data).toMatch(/^HTTP\/1\.1 408 .*"code":"RequestTimeout"/s);
    const head = c.state.data.split('\r\n\r\n')[0]!.toLowerCase();
    for (const name of ['content-security-policy', 'x-content-type-options: nosniff', 'strict-transport-security', 'referrer-policy: no-referrer', 'cache-control: no-store', 'x-request-id']) expect(head).toContain(name);
    c.socket.destroy();
  });

  it('an upload whose body never completes is closed too (its own, longer bound)', async () => {
    const port = await listening();
    const c = rawClient(port);
    c.socket.write(`POST /api/v4/groups/${g}/gtfs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${admin.auth['authorization']}\r\nContent-Type: application/zip\r\nContent-Length: 100000\r\n\r\nPK`);
    await waitFor('the server to close the upload', () => c.state.ended || /^HTTP\/1\.1 408/.test(c.state.data));
    c.socket.destroy();
  });

  it('an upload slower than the request timeout but within its own is received', async () => {
    const port = await listening();
    const zip = minimalZip();
    const c = rawClient(port);
    c.socket.write(`POST /api/v4/groups/${g}/gtfs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${admin.auth['authorization']}\r\nContent-Type: application/zip\r\nContent-Length: ${zip.length}\r\nConnection: close\r\n\r\n`);
    c.socket.write(zip.subarray(0, 100));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    c.socket.write(zip.subarray(100));
    await waitFor('the answer', () => c.state.ended);
    expect(c.state.data).toMatch(/^HTTP\/1\.1 201 /);
  });

  it('headers that never complete are closed too', async () => {
    const port = await listening();
    const c = rawClient(port);
    c.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    await waitFor('the server to close', () => c.state.ended || /^HTTP\/1\.1 408/.test(c.state.data));
    c.socket.destroy();
  });

  it('a request whose body arrives in time is answered as usual', async () => {
    const port = await listening();
    const r = await fetch(`http://127.0.0.1:${port}/api/v4/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'nobody@example.org', password: 'wrong password' }) });
    expect(r.status).toBe(401);
  });

  it('an answer being written is not cut by the request or upload timeouts (streamed exports)', async () => {
    const port = await listening();
    const r = await fetch(`http://127.0.0.1:${port}/test/slow-answer`);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe(Array.from({ length: 10 }, (_v, i) => `line ${i}\n`).join(''));
  });

  it('the live stream outlives the request and upload timeouts after its upgrade', async () => {
    const s = await subscribe(t.app, g, operator.auth);
    // Past both bounds and several of Node's checks (every 250 ms here).
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect(s.ws.readyState).toBe(s.ws.OPEN);
    // And it still works both ways: a ping is answered.
    const pong = new Promise<void>((resolve) => s.ws.once('pong', () => resolve()));
    s.ws.ping();
    await pong;
    s.ws.close();
  });
});
