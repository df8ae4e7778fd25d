import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { fixedClock } from '../../src/platform/clock.js';
import { NetworkSimulator, type BatchEvent, type BatchPost, type ReportAnswer } from '../../src/domains/simulate/simulator.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { importZip } from '../helpers/gtfs.js';
import { smallNetworkZip } from './feed.js';

// Monday 23 November 2026; Paris is UTC+1.
const at = (local: string) => new Date(`2026-11-23T${local}:00+01:00`);
const DATE = '2026-11-23';

describe('the network simulator on a published feed, over HTTP', () => {
  let t: TestApp;
  let g: string;
  let admin: TestUser;
  let baseUrl: string;
  const clock = fixedClock(at('07:00'));
  let sim: NetworkSimulator;
  const batches: BatchEvent[] = [];
  beforeAll(async () => {
    t = await setup({ clock });
    g = await newGroup(t);
    admin = await newUser(t, { groupId: g, role: 'admin', password: 'simulator-admin-pw' });
    await importZip(t, g, smallNetworkZip(), { publish: true });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = new NetworkSimulator({ baseUrl, groupId: g, adminAuth: { email: admin.email, password: admin.password }, provision: true, period: 15, now: () => clock.now(), seed: 7 });
    sim.onBatch((b) => batches.push(b));
    await sim.start();
    // The service's clock and the simulator's move together, past the end of every trip.
    // Every 2 minutes: a tick falls in each offline window (3 to 8 minutes).
    for (let m = 7 * 60 + 40; m <= 9 * 60 + 40; m += 2) {
      clock.set(at(`${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`));
      await sim.tick();
    }
  }, 300_000);
  afterAll(() => t.close());

  it('provisions one vehicle, driver and device per block: T1 and T2 (block B1) share one, T3 (no block) has its own', async () => {
    const vehicles = sim.vehiclesOf(DATE).map((v) => [v.vehicleId, v.deviceId, v.trips]);
    expect(vehicles.sort()).toEqual([['sim-B1', 'sim-B1-device', ['T1', 'T2']], ['sim-T3', 'sim-T3-device', ['T3']]]);
    const devices = (await inject(t, { url: `/api/v4/groups/${g}/devices`, headers: admin.auth })).json as { device_id: string; vehicle_id: string }[];
    expect(devices.map((d) => [d.device_id, d.vehicle_id]).sort()).toEqual([['sim-B1-device', 'sim-B1'], ['sim-T3-device', 'sim-T3']]);
    const drivers = await t.db.query<{ staff_number: string }>('SELECT staff_number FROM drivers WHERE group_id = $1', [g]);
    expect(drivers).toHaveLength(2);
    expect(sim.stats.rejected).toBe(0);
    expect(sim.stats.accepted).toBeGreaterThan(100);
    expect(batches.every((b) => b.answeredAt >= b.sentAt && b.items.length > 0)).toBe(true);
  });

  it('records each trip on its block\'s vehicle, every stop at the traffic model\'s times (within 1 s)', async () => {
    const truth = sim.truthOf(DATE)!;
    for (const [tripId, vehicle] of [['T1', 'sim-B1'], ['T2', 'sim-B1'], ['T3', 'sim-T3']] as const) {
      const expected = truth.get(tripId)!;
      const dayStart = at('00:00').getTime();
      const trip = (await inject(t, { url: `/api/v4/groups/${g}/trips/${tripId}?date=${DATE}`, headers: admin.auth })).json as {
        vehicles: { id: string }[]; delay: { stop_sequence: number; actual_arrival_at: string | null; actual_departure_at: string | null }[];
      };
      expect(trip.vehicles.map((v) => v.id)).toEqual([vehicle]);
      trip.delay.forEach((stop, i) => {
        const secs = (iso: string | null) => (iso === null ? null : (Date.parse(iso) - dayStart) / 1000);
        if (i > 0) expect(Math.abs(secs(stop.actual_arrival_at)! - expected.truth.arrival[i]!)).toBeLessThanOrEqual(1);
        if (i < trip.delay.length - 1) expect(Math.abs(secs(stop.actual_departure_at)! - expected.truth.passing[i]!)).toBeLessThanOrEqual(1);
      });
    }
    // The second trip of the block starts after the first has arrived, plus a layover.
    expect(truth.get('T2')!.truth.passing[0]!).toBeGreaterThanOrEqual(truth.get('T1')!.truth.arrival.at(-1)! + 180);
  });

  it('holds a device\'s items during an offline window and sends them once it ends (the backlog)', () => {
    const windows = sim.vehiclesOf(DATE).flatMap((v) => v.offline.map(([a, b]) => ({ device: v.deviceId, a, b })));
    expect(windows.length).toBeGreaterThan(0);
    for (const w of windows) {
      const held = batches.filter((b) => b.deviceId === w.device && b.items.some((i) => Date.parse(i.at) >= w.a && Date.parse(i.at) < w.b));
      expect(held.length).toBeGreaterThan(0);
      for (const b of held) expect(b.simulatedAt).toBeGreaterThanOrEqual(w.b);
    }
  });

  it('a second run provisions nothing new and its reports come back as duplicates', async () => {
    const again = new NetworkSimulator({ baseUrl, groupId: g, adminAuth: { email: admin.email, password: admin.password }, provision: true, period: 15, now: () => clock.now(), seed: 7 });
    await again.start();
    expect(again.stats.accepted).toBe(0);
    expect(again.stats.duplicates).toBeGreaterThan(100);
    const devices = (await inject(t, { url: `/api/v4/groups/${g}/devices`, headers: admin.auth })).json as unknown[];
    expect(devices).toHaveLength(2);
  }, 120_000);

  it('posts every batch through the `post` it is given, and tells each batch with the times that post measured', async () => {
    const timed: { sentAt: number; answeredAt: number }[] = [];
    const post: BatchPost = async (key, items) => {
      const sentAt = Date.now();
      const res = await fetch(`${baseUrl}/api/v4/groups/${g}/device/reports`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ items }) });
      expect(res.status).toBe(200);
      // Times of its own, told apart from any the simulator could take itself.
      const t = { sentAt: sentAt - 1_000_000, answeredAt: Date.now() - 1_000_000 };
      timed.push(t);
      return { answer: (await res.json()) as ReportAnswer, ...t };
    };
    const again = new NetworkSimulator({ baseUrl, groupId: g, adminAuth: { email: admin.email, password: admin.password }, provision: true, period: 15, now: () => clock.now(), seed: 7, post });
    const seen: BatchEvent[] = [];
    again.onBatch((b) => seen.push(b));
    await again.start();
    expect(again.stats.duplicates).toBeGreaterThan(100);
    expect(timed.length).toBe(again.stats.batches);
    expect(seen.map((b) => ({ sentAt: b.sentAt, answeredAt: b.answeredAt }))).toEqual(timed);
    expect(seen.every((b) => b.seenAt >= b.answeredAt + 1_000_000)).toBe(true);
  }, 120_000);
});
