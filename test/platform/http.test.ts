import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newUser, setup, type TestApp } from '../helpers/app.js';
import { rewriteVersion } from '../../src/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await setup({
    config: { bodyLimitBytes: 2048 },
    extraRoutes: (app) =>
      app.get('/test/boom', async () => {
        throw new Error('secret internals: SELECT * FROM users');
      }),
  });
});
afterAll(async () => t?.close());

describe('platform HTTP behaviour', () => {
  it('answers liveness and readiness', async () => {
    expect((await inject(t, { url: '/health' })).json).toEqual({ status: 'ok' });
    const ready = await inject(t, { url: '/ready' });
    expect(ready.status).toBe(200);
    expect(ready.json.status).toBe('ready');
  });

  it('answers unknown routes with a JSON 404', async () => {
    const r = await inject(t, { url: '/api/v4/nowhere' });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ detail: 'No route GET /api/v4/nowhere', code: 'RouteNotFound' });
  });

  it('answers an unexpected exception with 500, a request id, and no internals', async () => {
    const r = await inject(t, { url: '/test/boom' });
    expect(r.status).toBe(500);
    expect(r.json.code).toBe('InternalError');
    expect(r.json.request_id).toMatch(/^[0-9a-f]{24}$/);
    expect(r.headers['x-request-id']).toBe(r.json.request_id);
    expect(r.body).not.toContain('SELECT');
    expect(r.body).not.toContain('at ');
  });

  it('serves every version under its prefix, v4 being the default', async () => {
    expect(rewriteVersion('/api/v2/groups/a/trips?date=1')).toBe('/api/v4/groups/a/trips?date=1');
    expect(rewriteVersion('/api/v5/login')).toBe('/api/v4/login');
    expect(rewriteVersion('/api/v3/openapi/public.json')).toBe('/api/v3/openapi/public.json');
    expect(rewriteVersion('/api/v6/login')).toBe('/api/v6/login');
    for (const v of ['v2', 'v3', 'v4', 'v5']) {
      const r = await inject(t, { url: `/api/${v}/auth/provider` });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ provider: 'legacy' });
    }
  });

  it('refuses a body over the configured limit with 413', async () => {
    const su = await newUser(t, { superuser: true });
    const r = await inject(t, { method: 'POST', url: '/api/v4/groups', headers: su.auth, payload: { group_id: 'big', name: 'x'.repeat(5000) } });
    expect(r.status).toBe(413);
    expect(r.json.code).toBe('PayloadTooLarge');
  });

  it('answers malformed JSON with a 422 json_invalid', async () => {
    const su = await newUser(t, { superuser: true });
    const r = await inject(t, { method: 'POST', url: '/api/v4/groups', headers: { ...su.auth, 'content-type': 'application/json' }, payload: '{"group_id": ' });
    expect(r.status).toBe(422);
    expect(r.json.detail[0].type).toBe('json_invalid');
  });

  it('answers 501 NotImplemented, after validation, for endpoints not built yet', async () => {
    const g = await newGroup(t);
    const u = await newUser(t, { groupId: g, role: 'operator' });
    const bad = await inject(t, { url: `/api/v4/groups/${g}/vehicle-movements?date=2024-13-01`, headers: u.auth });
    expect(bad.status).toBe(422);
    const r = await inject(t, { url: `/api/v4/groups/${g}/vehicle-movements?date=2024-12-01`, headers: u.auth });
    if (r.status === 501) expect(r.json.code).toBe('NotImplemented');
    else expect(r.status).toBe(200);
  });

  it('exposes Prometheus metrics', async () => {
    const r = await inject(t, { url: '/metrics' });
    expect(r.status).toBe(200);
    expect(r.body).toContain('transit_ops_http_request_duration_seconds');
    expect(r.body).toContain('transit_ops_process_cpu_user_seconds_total');
    // Each thread's time on a CPU and waiting for one (os-threads.ts), where the kernel tells it.
    if (process.platform === 'linux') {
      expect(r.body).toMatch(/^transit_ops_thread_cpu_seconds_total\{thread="main"\} \d+(\.\d+)?(e[-+]\d+)?$/m);
      expect(r.body).toMatch(/^transit_ops_thread_wait_seconds_total\{thread="main"\} \d+(\.\d+)?(e[-+]\d+)?$/m);
    }
  });
});
