/**
 * The incremental snapshot (issue #16, network.ts networkNow `previous`): a trip told exactly as
 * in the group's previous snapshot is that snapshot's object again, and every snapshot read so is
 * the one read from nothing at the same time (the truth: nothing kept).
 *
 * The shared network (fixture.ts), clock 08:35 local: a bus on T3 (08:30–08:50, block B2, then T4
 * at 10:00) left S1 on time at 08:30; T2 (09:00, block B1) is within the SIRI horizon with its
 * vehicle not known.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkNow, type NetworkNow } from '../../src/domains/feeds/network.js';
import { trackingOf } from '../../src/domains/trips/tracking.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { feedFixture, putUpdate, type FeedFixture } from './fixture.js';

describe('a snapshot read with the previous one', () => {
  let f: FeedFixture;
  let device: { auth: Record<string, string> };
  const read = (previous?: NetworkNow) =>
    networkNow(f.t.ctx.db, f.g, f.clock.now(), {
      staleVehicleSeconds: f.t.ctx.config.feeds.staleVehicleSeconds, predictions: f.t.ctx.config.predictions,
      scheduleHorizonSeconds: f.t.ctx.config.feeds.etHorizonMinutes * 60, ...(previous ? { previous } : {}),
    });
  const byTrip = (net: NetworkNow) => new Map(net.trips.map((t) => [t.trip.trip_id, t]));
  /** The trips of `net` that are `before`'s objects. */
  const kept = (net: NetworkNow, before: NetworkNow) => net.trips.filter((t) => before.trips.includes(t)).map((t) => t.trip.trip_id);

  beforeAll(async () => {
    f = await feedFixture();
    device = await newDevice(f.t, f.g);
    const r = await send(f.t, f.g, device.auth, [
      item('sign_on', '2026-03-10T07:00:00Z', { driver_id: await newDriver(f.t, f.g), vehicle_id: await newVehicle(f.t, f.g) }),
      item('trip_event', '2026-03-10T07:30:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
    ]);
    expect(r.json.rejected).toEqual([]);
  });
  afterAll(async () => f?.t.close());

  it('nothing reported and the clock where it was: every trip is the previous snapshot\'s', async () => {
    const first = await read();
    expect([...byTrip(first).keys()]).toEqual(['T3', 'T2', 'T4']);
    const again = await read(first);
    expect(kept(again, first)).toEqual(['T3', 'T2', 'T4']);
  });

  it('the clock alone moves T3 (its bus not at S2 at 08:42, expected there within the 15 s after now: its step of the clock): T3 made anew, T2 and T4 kept, the whole as read from nothing; up to that time T3 kept, a second after it made anew a step later', async () => {
    const first = await read();
    f.clock.advance(7 * 60_000);
    const at = f.clock.now();
    const next = await read(first);
    expect(next.trips).toEqual((await read()).trips);
    expect(kept(next, first)).toEqual(['T2', 'T4']);
    // Held to its block's step of the clock (PREDICTIONS_CLOCK_STEP_SECONDS, 15): expected at S2 (scheduled 08:40) in the 15 s after 08:42.
    const held = byTrip(next).get('T3')!.calls[1]!.expected_arrival_at!.getTime();
    expect(held - at.getTime()).toBeGreaterThan(0); // T3's phase: 10 s
    expect(held - at.getTime()).toBeLessThan(15_000);
    f.clock.set(new Date(held));
    const within = await read(next);
    expect(kept(within, next)).toEqual(['T3', 'T2', 'T4']);
    f.clock.advance(1000);
    const past = await read(within);
    expect(past.trips).toEqual((await read()).trips);
    expect(kept(past, within)).toEqual(['T2', 'T4']);
    expect(byTrip(past).get('T3')!.calls[1]!.expected_arrival_at!.getTime()).toBe(held + 15_000);
    f.clock.set(at);
  });

  it('a report on T3 (S2 passed at 08:43, 3 minutes late): T3 and T4 (told with its bus\'s last observation) made anew, T2 kept, the whole as read from nothing; a new GTFS version keeps nothing', async () => {
    f.clock.advance(60_000);
    const first = await read();
    const r = await send(f.t, f.g, device.auth, [item('trip_event', '2026-03-10T07:43:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S2', stop_sequence: 2, gps_valid: true })]);
    expect(r.json.rejected).toEqual([]);
    const next = await read(first);
    expect(next.trips).toEqual((await read()).trips);
    expect(kept(next, first)).toEqual(['T2']);
    expect(byTrip(next).get('T4')!.observed_at).toEqual(new Date('2026-03-10T07:43:00Z'));
    expect(byTrip(next).get('T3')!.calls[1]).toMatchObject({ passed: true, expected_arrival_at: new Date('2026-03-10T07:43:00Z') });
    // A snapshot of another GTFS version: what it told is not taken.
    const other = { ...first, trips: first.trips.map((t) => ({ ...t, gtfs_id: `${t.gtfs_id}-other` })) };
    expect(kept(await read(other), other)).toEqual([]);
  });

  it('the open trips\' tracking read again (its stops kept per row between reads) is the tracking read from nothing: after an update skips a stop of T3, and after a report on it', async () => {
    const date = '2026-03-10';
    const open = async () => (await trackingOf(f.t.ctx.db, f.g, date, undefined, { now: f.clock.now(), open: true })).find((t) => t.trip_id === 'T3')!;
    const fromNothing = async () => (await trackingOf(f.t.ctx.db, f.g, date, ['T3'], { now: f.clock.now() }))[0]!;
    await open();
    expect((await putUpdate(f, { update_id: 'skip-T3-S3', kind: 'skip_stop', trip_id: 'T3', stop: { stop_sequence: 3 }, start_date: date, end_date: date })).status).toBe(200);
    const skipped = await open();
    expect(skipped.stops).toEqual((await fromNothing()).stops);
    expect(skipped.stops.map((s) => s.status)).toEqual(['passed', 'passed', 'skipped']);
    const r = await send(f.t, f.g, device.auth, [item('trip_event', '2026-03-10T07:44:00Z', { trip_id: 'T3', service_date: date, event: 'stop_passed', stop_id: 'S3', stop_sequence: 3, gps_valid: true })]);
    expect(r.json.rejected).toEqual([]);
    const passed = await open();
    expect(passed.stops).toEqual((await fromNothing()).stops);
    expect(passed.stops.map((s) => [s.status, s.actual_at])).toEqual([['passed', '2026-03-10T07:30:00.000Z'], ['passed', '2026-03-10T07:43:00.000Z'], ['passed', '2026-03-10T07:44:00.000Z']]);
  });
});
