import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { createApiKey, hostPrincipal, wholeGroup } from '../../src/domains/auth/service.js';
import { demoAccount, loadDemo } from '../../src/domains/demo/load.js';
import { generateNetwork } from '../../src/domains/demo/network.js';
import { originAllowed } from '../../src/domains/live/routes.js';
import { item, send } from '../helpers/actual.js';
import { inject, setup, type TestApp } from '../helpers/app.js';

// Monday 23 November 2026, 05:40 in Paris (UTC+1).
const clock = fixedClock('2026-11-23T04:40:00Z');

describe('the live network page and its reads', () => {
  let t: TestApp;
  let operator: Record<string, string>;
  const n = generateNetwork();
  beforeAll(async () => {
    t = await setup({ clock });
    await loadDemo(t.ctx);
    const login = await inject(t, {
      method: 'POST', url: '/api/v4/login', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: demoAccount('operator').email, password: demoAccount('operator').password }).toString(),
    });
    operator = { authorization: `Bearer ${login.json.session_id}` };
  }, 120_000);
  afterAll(() => t.close());

  it('serves the page and its files, without credential and without any external resource', async () => {
    const page = await inject(t, { url: '/live' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('/live/app.js');
    expect(page.body).not.toMatch(/https?:\/\//);
    const js = await inject(t, { url: '/live/app.js' });
    expect(js.headers['content-type']).toContain('text/javascript');
    // The SVG namespace is a name, not a resource.
    expect(js.body.replaceAll('http://www.w3.org/2000/svg', '')).not.toMatch(/https?:\/\//);
    expect((await inject(t, { url: '/live/style.css' })).status).toBe(200);
  });

  it('draws the network in force: each route with its two shapes, and the stops', async () => {
    const res = await inject(t, { url: '/api/v4/groups/demo/live-map/network', headers: operator });
    expect(res.status).toBe(200);
    expect(res.json.service_date).toBe('2026-11-23');
    expect(res.json.timezone).toBe('Europe/Paris');
    expect(res.json.routes.map((r: { route_id: string; shapes: unknown[] }) => [r.route_id, r.shapes.length])).toEqual([['L1', 2], ['L2', 2], ['L3', 2], ['L4', 2], ['N', 2]]);
    expect(res.json.stops.length).toBe(n.stops.length);
    expect((await inject(t, { url: '/api/v4/groups/demo/live-map/network' })).status).toBe(401);
  });

  it('lists the vehicles on duty with their last position, driver and the delay at the last stop event', async () => {
    const key = await createApiKey(t.ctx, hostPrincipal, wholeGroup('demo'), { device_id: 'tab-101' });
    const trip = n.trips.find((x) => x.trip_id === 'L1-WK-0-0530')!;
    const [first, second] = trip.stop_times;
    // Scheduled: departure 05:30:00 (04:30Z); the second stop at its arrival time.
    const secondAt = new Date(Date.parse('2026-11-23T04:30:00Z') + (second!.arrival - first!.departure) * 1000 + 95_000);
    const ref = { trip_id: trip.trip_id, service_date: '2026-11-23' };
    const answer = await send(t, 'demo', { 'x-api-key': key.value }, [
      item('sign_on', '2026-11-23T04:15:00Z', { driver_code: '1001', vehicle_id: 'bus-101' }),
      item('trip_start', '2026-11-23T04:31:00Z', ref),
      item('trip_event', '2026-11-23T04:32:00Z', { ...ref, event: 'departure', stop_id: first!.stop_id, stop_sequence: 1, gps_valid: true }),
      item('trip_event', secondAt, { ...ref, event: 'stop_passed', stop_id: second!.stop_id, stop_sequence: 2, gps_valid: true }),
      item('position', new Date(secondAt.getTime() + 10_000), { ...ref, lat: 45.76, lon: 4.83, gps_valid: true, bearing: 90 }),
    ]);
    expect(answer.json.complete).toBe(true);
    const res = await inject(t, { url: '/api/v4/groups/demo/live-map/vehicles', headers: operator });
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(1);
    const v = res.json[0];
    expect(v).toMatchObject({ device_id: 'tab-101', vehicle_id: 'bus-101', fleet_number: '101', position: { lat: 45.76, lon: 4.83, bearing: 90 } });
    expect(v.driver_name).toMatch(/\S+ \S+/);
    // 95 s after the scheduled arrival at stop 2.
    expect(v.trip).toMatchObject({ trip_id: 'L1-WK-0-0530', route_id: 'L1', route_short_name: '1', route_color: 'E3051B', delay_seconds: 95, last_stop_sequence: 2, last_event: 'stop_passed' });

    await send(t, 'demo', { 'x-api-key': key.value }, [item('sign_off', '2026-11-23T05:30:00Z', {})]);
    expect((await inject(t, { url: '/api/v4/groups/demo/live-map/vehicles', headers: operator })).json).toEqual([]);
  });

  it('lets the service\'s own pages open the live stream (same origin), and no other site', () => {
    expect(originAllowed('http://localhost:8080', [], undefined, 'localhost:8080')).toBe(true);
    expect(originAllowed('https://evil.example', [], undefined, 'localhost:8080')).toBe(false);
    expect(originAllowed('null', [], undefined, 'localhost:8080')).toBe(false);
  });
});
