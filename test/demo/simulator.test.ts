import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { fixedClock } from '../../src/platform/clock.js';
import { demoAccount, loadDemo } from '../../src/domains/demo/load.js';
import { generateNetwork } from '../../src/domains/demo/network.js';
import { vehicleDay } from '../../src/domains/demo/simulation.js';
import { Simulator } from '../../src/domains/demo/simulator.js';
import { tripsOnServiceDate } from '../../src/domains/gtfs/service-days.js';
import { inject, setup, type TestApp } from '../helpers/app.js';

// Monday 23 November 2026; Paris is UTC+1.
const at = (local: string) => new Date(`2026-11-23T${local}:00+01:00`);

describe('the simulator, over HTTP against the demo network', () => {
  let t: TestApp;
  let baseUrl: string;
  let simNow = at('05:00');
  let operator: Record<string, string>;
  const sim = () => new Simulator({ baseUrl, now: () => simNow });
  beforeAll(async () => {
    t = await setup({ clock: fixedClock(at('05:00')) });
    await loadDemo(t.ctx);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const login = await inject(t, {
      method: 'POST', url: '/api/v4/login', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: demoAccount('operator').email, password: demoAccount('operator').password }).toString(),
    });
    operator = { authorization: `Bearer ${login.json.session_id}` };
  }, 180_000);
  afterAll(() => t.close());

  const events = async (tripId: string) =>
    (await inject(t, { url: `/api/v4/groups/demo/trip-events?start_date=2026-11-23&end_date=2026-11-23&trip_id=${tripId}`, headers: operator })).json as { event: string; stop_sequence: number; vehicle_id: string; driver_id: string }[];

  it('signs the morning vehicles on and records every stop of the trips that ended, with no item rejected', async () => {
    const s = sim();
    await s.start();
    simNow = at('06:30');
    await s.tick();
    simNow = at('07:30');
    await s.tick();
    expect(s.stats.rejected).toBe(0);
    expect(s.stats.accepted).toBeGreaterThan(0);

    const day = await tripsOnServiceDate(t.db, 'demo', '2026-11-23');
    const planning = (await inject(t, { url: '/api/v4/groups/demo/planning?date=20261123', headers: operator })).json as { trip_id: string; start_time: string; vehicle_id: string; driver_id: string }[];
    // Trips of the timetable scheduled to end by 06:15: all their stops are recorded (every
    // offline window of 8 minutes at most that began before has ended by 07:30).
    const ended = day.trips.filter((x) => x.frequency === null && x.last_arrival <= 6 * 3600 + 15 * 60);
    expect(ended.length).toBeGreaterThan(4);
    for (const trip of ended) {
      const recorded = await events(trip.trip_id);
      expect(recorded.map((e) => e.event)).toEqual(['departure', ...Array(trip.stop_count - 2).fill('stop_passed'), 'arrival']);
      const planned = planning.find((p) => p.trip_id === trip.trip_id)!;
      expect(recorded.every((e) => e.vehicle_id === planned.vehicle_id && e.driver_id === planned.driver_id)).toBe(true);
    }

    // A duty is open for each vehicle whose first trip started by 07:15, none for those starting after 07:46.
    const duties = (await inject(t, { url: '/api/v4/groups/demo/duties?start_date=2026-11-23&end_date=2026-11-23', headers: operator })).json as { vehicle_id: string }[];
    const firstStart = new Map<string, number>();
    for (const p of planning) {
      const [h, m] = p.start_time.split(':').map(Number) as [number, number];
      firstStart.set(p.vehicle_id, Math.min(firstStart.get(p.vehicle_id) ?? Infinity, h * 60 + m));
    }
    const signedOn = new Set(duties.map((d) => d.vehicle_id));
    for (const [vehicle, start] of firstStart) {
      if (start <= 7 * 60 + 15) expect(signedOn.has(vehicle)).toBe(true);
      if (start > 7 * 60 + 46) expect(signedOn.has(vehicle)).toBe(false);
    }
  }, 300_000);

  it('sends the same items again after a restart, and the service keeps them once', async () => {
    const again = sim();
    await again.start();
    expect(again.stats.accepted).toBe(0);
    expect(again.stats.duplicates).toBeGreaterThan(0);
    expect(again.stats.rejected).toBe(0);
  }, 300_000);
});

describe('a vehicle\'s simulated day', () => {
  const n = generateNetwork();
  const block = n.blocks.find((b) => b.service_id === 'WK' && b.route_id === 'L1')!;
  const pieces = block.trips.map((p) => ({ trip_id: p.trip_id, start: p.start, start_time: null, driver_id: p.shift === 0 ? 'a'.repeat(24) : 'b'.repeat(24) }));
  const day = vehicleDay(n, '2026-11-23', 'bus-101', 'tab-101', pieces, { seed: 1, positionEvery: 20 });

  it('holds the items of an offline window until the window ends (the backlog)', () => {
    expect(day.offline.length).toBeGreaterThan(0);
    for (const { item, release } of day.items) {
      const time = Date.parse(item.at);
      const window = day.offline.find(([from, to]) => time >= from && time < to);
      expect(release).toBe(window ? window[1] : time);
    }
    expect(day.items.some(({ item, release }) => release > Date.parse(item.at))).toBe(true);
  });

  it('opens a duty per driver: sign-on and sign-off around each driver\'s trips, the relief between', () => {
    const signs = day.items.filter(({ item }) => item.type === 'sign_on' || item.type === 'sign_off').map(({ item }) => [item.type, item['driver_id'] ?? null]);
    expect(signs).toEqual([['sign_on', 'a'.repeat(24)], ['sign_off', null], ['sign_on', 'b'.repeat(24)], ['sign_off', null]]);
    const starts = day.items.filter(({ item }) => item.type === 'trip_start').map(({ item }) => item['trip_id']);
    expect(starts).toEqual(block.trips.map((p) => p.trip_id));
  });

  it('is the same day for the same seed, with the same item ids', () => {
    const again = vehicleDay(n, '2026-11-23', 'bus-101', 'tab-101', pieces, { seed: 1, positionEvery: 20 });
    expect(again.items.map((i) => i.item.id)).toEqual(day.items.map((i) => i.item.id));
  });
});
