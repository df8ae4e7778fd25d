import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { DEMO_ACCOUNTS, demoAccount, loadDemo, type DemoSummary } from '../../src/domains/demo/load.js';
import { generateNetwork, instancesOf, serviceOf } from '../../src/domains/demo/network.js';
import { demoAssignments, fleetSize } from '../../src/domains/demo/planning.js';
import { tripsOnServiceDate } from '../../src/domains/gtfs/service-days.js';
import { testConfig } from '../../src/config.js';
import { demoDecision } from '../../src/domains/demo/start.js';
import { inject, newGroup, setup, type TestApp } from '../helpers/app.js';

// Monday 23 November 2026, 10:00 in Paris.
const clock = fixedClock('2026-11-23T09:00:00Z');

describe('the demo loader', () => {
  let t: TestApp;
  let demo: DemoSummary;
  const n = generateNetwork();
  beforeAll(async () => {
    t = await setup({ clock });
    demo = await loadDemo(t.ctx);
  }, 120_000);
  afterAll(() => t.close());

  const login = async (email: string, password: string) =>
    inject(t, { method: 'POST', url: '/api/v4/login', payload: `email=${encodeURIComponent(email)}&password=${encodeURIComponent(password)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });

  it('publishes the generated GTFS: the trips of a Monday are the weekday trips and the shuttle instances', async () => {
    expect(serviceOf('2026-11-23')).toBe('WK');
    const day = await tripsOnServiceDate(t.db, 'demo', '2026-11-23');
    expect(day.gtfsId).toBe(demo.gtfsId);
    const expected = n.trips.filter((x) => x.service_id === 'WK').flatMap(instancesOf).length;
    expect(day.trips.length).toBe(expected);
    // 11 November is a Wednesday holiday: the Sunday service runs.
    const holiday = await tripsOnServiceDate(t.db, 'demo', '2026-11-11');
    expect(holiday.trips.length).toBe(n.trips.filter((x) => x.service_id === 'SU').flatMap(instancesOf).length);
    // Trips of the evening end after midnight, in the same service day.
    expect(day.trips.some((x) => x.last_arrival > 24 * 3600)).toBe(true);
  });

  it('plans every trip of today, each with a vehicle and a driver', async () => {
    const operator = await login(demoAccount('operator').email, demoAccount('operator').password);
    expect(operator.status).toBe(200);
    const res = await inject(t, { url: '/api/v4/groups/demo/planning?date=20261123', headers: { authorization: `Bearer ${operator.json.session_id}` } });
    expect(res.status).toBe(200);
    expect(res.json.length).toBe(demoAssignments(n, '2026-11-23').length);
    expect(res.json.every((p: { vehicle_id: string | null; driver_id: string | null }) => p.vehicle_id && p.driver_id)).toBe(true);
    expect(demo.counts.planned_trips).toBe(res.json.length);
  });

  it('makes one account per role that logs in with its printed password', async () => {
    expect(DEMO_ACCOUNTS.map((a) => a.role).sort()).toEqual(['admin', 'driver', 'external_reader', 'limited_reader', 'operator', 'reader', 'regulator', 'technical']);
    const admin = await login(demoAccount('admin').email, demoAccount('admin').password);
    const roles = await inject(t, { url: '/api/v4/groups/demo/roles', headers: { authorization: `Bearer ${admin.json.session_id}` } });
    expect(roles.json.map((r: { role: string }) => r.role).sort()).toEqual(DEMO_ACCOUNTS.map((a) => a.role).sort());
    expect(roles.json.find((r: { role: string }) => r.role === 'limited_reader').teams).toEqual(['nord']);
  });

  it('runs the demo at the next starts, unless told no', async () => {
    expect(await demoDecision(t.ctx, testConfig())).toBe('run');
    expect(await demoDecision(t.ctx, testConfig({ demo: false }))).toBe('off');
  });

  it('prints an API key that reads the group', async () => {
    const res = await inject(t, { url: '/api/v4/groups/demo/vehicle-amount', headers: { 'x-api-key': demo.apiKey } });
    expect(res.status).toBe(200);
    const size = fleetSize(n);
    expect(res.json.amount).toBe(size.vehicles);
    expect(res.json.by_status).toMatchObject({ active: size.vehicles - 1, maintenance: 1 });
  });

  it('provisions devices mounted in the vehicles, depots, danger zones, an on-demand route and rail station links', async () => {
    const admin = await login(demoAccount('admin').email, demoAccount('admin').password);
    const auth = { authorization: `Bearer ${admin.json.session_id}` };
    const devices = await inject(t, { url: '/api/v4/groups/demo/devices', headers: auth });
    expect(devices.json.length).toBe(fleetSize(n).vehicles);
    expect(devices.json.every((d: { vehicle_id: string | null }) => d.vehicle_id !== null)).toBe(true);
    expect((await inject(t, { url: '/api/v4/groups/demo/danger-zones', headers: auth })).json.length).toBe(3);
    expect((await inject(t, { url: '/api/v4/groups/demo/on-demand-routes/public' })).json.map((r: { route_id: string }) => r.route_id)).toEqual(['TAD-COLLINES']);
    const links = await inject(t, { url: '/api/v4/groups/demo/rail/station-links', headers: auth });
    expect(links.json.map((l: { stop_id: string; is_orphan: boolean }) => [l.stop_id, l.is_orphan]).sort()).toEqual([['GARE', false], ['HUB', false]]);
    const depots = await inject(t, { url: '/api/v4/groups/demo/depots', headers: { authorization: `Bearer ${(await login(demoAccount('reader').email, demoAccount('reader').password)).json.session_id}` } });
    expect(depots.json.map((d: { depot_id: string }) => d.depot_id).sort()).toEqual(['nord', 'sud']);
  });
});

describe('the demo network generator', () => {
  it('gives the same network for the same seed, another for another seed', () => {
    expect(JSON.stringify(generateNetwork(7))).toBe(JSON.stringify(generateNetwork(7)));
    expect(generateNetwork(7).stops[1]!.lat).not.toBe(generateNetwork(8).stops[1]!.lat);
  });

  it('chains each block\'s trips end to start at the same stop, with a layover', () => {
    const n = generateNetwork();
    const byId = new Map(n.trips.flatMap(instancesOf).map((x) => [`${x.trip_id}@${x.stop_times[0]!.departure}`, x]));
    for (const b of n.blocks) {
      for (let i = 1; i < b.trips.length; i++) {
        const prev = byId.get(`${b.trips[i - 1]!.trip_id}@${b.trips[i - 1]!.start}`)!;
        const next = byId.get(`${b.trips[i]!.trip_id}@${b.trips[i]!.start}`)!;
        expect(next.stop_times[0]!.stop_id).toBe(prev.stop_times.at(-1)!.stop_id);
        expect(next.stop_times[0]!.departure - prev.stop_times.at(-1)!.arrival).toBeGreaterThanOrEqual(240);
      }
    }
  });
});

describe('whether npm start loads the demo', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setup({ clock });
  });
  afterAll(() => t.close());

  it('loads it into an empty embedded database, never with DATABASE_URL unless asked, and not when told no', async () => {
    expect(await demoDecision(t.ctx, testConfig())).toBe('load');
    expect(await demoDecision(t.ctx, testConfig({ databaseUrl: 'postgres://x@127.0.0.1/y' }))).toBe('off');
    expect(await demoDecision(t.ctx, testConfig({ databaseUrl: 'postgres://x@127.0.0.1/y', demo: true }))).toBe('load');
    expect(await demoDecision(t.ctx, testConfig({ demo: false }))).toBe('off');
  });

  it('leaves alone an embedded database that holds other groups', async () => {
    await newGroup(t, { group_id: 'metro' });
    expect(await demoDecision(t.ctx, testConfig())).toBe('off');
    expect(await demoDecision(t.ctx, testConfig({ demo: true }))).toBe('load');
  });
});
