import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { fixedClock } from '../../src/platform/clock.js';
import { demoAccount, loadDemo } from '../../src/domains/demo/load.js';
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
  let s: Simulator;

  it('signs the morning vehicles on and records an arrival and a departure at every stop of the trips that ended, with no item rejected', async () => {
    s = sim();
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
      const byStop = new Map<number, string[]>();
      for (const e of recorded) byStop.set(e.stop_sequence, [...(byStop.get(e.stop_sequence) ?? []), e.event].sort());
      const calls = [...byStop].sort((a, b) => a[0] - b[0]).map(([, ev]) => ev);
      expect(calls).toEqual([['departure'], ...Array(trip.stop_count - 2).fill(['arrival', 'departure']), ['arrival']]);
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

  describe('the demo simulator\'s days', () => {
    it('follows the planning: a vehicle\'s trips split at the relief into two duties, each driver signed on before their first trip and off after their last', async () => {
      // The simulator of the first test prepared today's vehicles from the planning.
      const planning = (await inject(t, { url: '/api/v4/groups/demo/planning?date=20261123', headers: operator })).json as { trip_id: string; vehicle_id: string; driver_id: string }[];
      const vehicle = s.vehiclesOf('2026-11-23').find((v) => v.run.duties.length === 2 && v.run.duties.every((d) => d.trips.every((x) => !x.plan.frequency)))!;
      expect(vehicle).toBeDefined();
      const [first, second] = vehicle.run.duties as [typeof vehicle.run.duties[0], typeof vehicle.run.duties[0]];
      const driverOf = new Map(planning.filter((p) => p.vehicle_id === vehicle.vehicleId).map((p) => [p.trip_id, p.driver_id]));
      expect(first.driver_id).not.toBe(second.driver_id);
      for (const duty of [first, second]) for (const trip of duty.trips) expect(driverOf.get(trip.plan.trip_id)).toBe(duty.driver_id);
      const items = vehicle.run.items(0, Infinity).map((x) => x.item).filter((i) => i.type === 'sign_on' || i.type === 'sign_off' || i.type === 'trip_start');
      const kinds = items.map((i) => (i.type === 'sign_on' ? `on:${(i as unknown as { driver_id: string }).driver_id}` : i.type === 'sign_off' ? 'off' : 'trip'));
      expect(kinds).toEqual([`on:${first.driver_id}`, ...first.trips.map(() => 'trip'), 'off', `on:${second.driver_id}`, ...second.trips.map(() => 'trip'), 'off']);
    });
  });
});
