/**
 * Trip tracking from device reports: stop passages from events and from positions, delays,
 * kilometres, late reports, and the overlay of trip updates. Distances: cheap-ruler at 48.85°N
 * gives 1° of latitude = 111.2068 km, so 0.001° = 0.111 km and S1→S3 (0.02°) = 2.224 km.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFRESH_REST_MAX_MS, refreshRound, roundOrder, roundPeriod, trackingOf, type TripRef } from '../../src/domains/trips/tracking.js';
import { markDirty } from '../../src/domains/trips/queries/tracking.js';
import { ingestBatch } from '../../src/domains/device/ingest.js';
import type { Db } from '../../src/platform/db/index.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

const DATE = '2026-03-02'; // a Monday, Europe/Paris at +01:00: 08:00 local = 07:00Z
const FEED = {
  'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.850,2.35\nS2,Second,48.860,2.35\nS3,Third,48.870,2.35\n',
  'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id,shape_id\nR1,WK,T1,Third,0,B1,SH1\nR1,WK,T2,Third,0,B1,SH1\n',
  'shapes.txt': 'shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\nSH1,48.850,2.35,1\nSH1,48.870,2.35,2\n',
  'stop_times.txt': [
    'trip_id,arrival_time,departure_time,stop_id,stop_sequence',
    'T1,08:00:00,08:00:00,S1,1', 'T1,08:10:00,08:11:00,S2,2', 'T1,08:20:00,08:20:00,S3,3',
    'T2,09:00:00,09:00:00,S1,1', 'T2,09:10:00,09:11:00,S2,2', 'T2,09:20:00,09:20:00,S3,3',
  ].join('\n') + '\n',
};

let t: TestApp;
let g: string;
let operator: TestUser;
let dev: Awaited<ReturnType<typeof newDevice>>;
let bus: string;
let driver: string;
const at = (hhmmss: string) => `${DATE}T${hhmmss}Z`;
const minute = (m: number, s = 0) => new Date(Date.parse(at('07:00:00')) + m * 60_000 + s * 1000).toISOString();

beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  operator = await newUser(t, { groupId: g, role: 'operator' });
  await importZip(t, g, minimalZip(FEED), { publish: true });
  dev = await newDevice(t, g);
  bus = await newVehicle(t, g);
  driver = await newDriver(t, g);
  expect((await send(t, g, dev.auth, [item('sign_on', at('06:50:00'), { driver_id: driver, vehicle_id: bus })])).json.complete).toBe(true);
});
afterAll(async () => t?.close());

const ref = (trip: string) => ({ trip_id: trip, service_date: DATE });

describe('trip tracking', () => {
  it('times stops from events and, where events are missing, from positions on the shape', async () => {
    // A position a minute from 07:01 to 07:21, 0.001° north each minute (111 m/min): the bus is on
    // S2 (0.010° from S1) at 07:11 without stopping. It arrives 15 m before it (07:10:52) and has
    // departed once 30 m beyond it (07:11:16), which is when S2 is passed (the old rule took the
    // fix on the stop, before the vehicle had moved beyond it).
    const positions = Array.from({ length: 21 }, (_, k) => item('position', minute(1 + k), { lat: 48.85 + 0.001 * k, lon: 2.35, gps_valid: true, ...ref('T1') }));
    const r = await send(t, g, dev.auth, [
      item('trip_start', minute(-2), ref('T1')),
      item('trip_event', minute(1), { ...ref('T1'), event: 'departure', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
      ...positions,
      item('trip_event', minute(22), { ...ref('T1'), event: 'arrival', stop_id: 'S3', gps_valid: true }),
      item('trip_end', minute(23), ref('T1')),
    ]);
    expect(r.json.complete).toBe(true);

    const [trip] = await trackingOf(t.db, g, DATE, ['T1'], { now: new Date(minute(30)) });
    expect(trip!.stops.map((s) => [s.stop_id, s.source, s.actual_at, s.delay_seconds, s.status])).toEqual([
      ['S1', 'event', minute(1), 60, 'passed'], // departure 07:01 against 08:00 local
      ['S2', 'position', minute(11, 16), 16, 'passed'], // departed 07:11:16, scheduled departure 08:11 local
      ['S3', 'event', minute(22), 120, 'passed'], // last stop: arrival 07:22 against 08:20 local
    ]);
    expect(trip!.stops.map((s) => [s.actual_arrival_at, s.actual_departure_at, s.dwell_seconds])).toEqual([
      [minute(1), minute(1), 0], // the first fix, on S1; the departure event
      [minute(10, 52), minute(11, 16), 24],
      [minute(22), null, null], // the arrival event
    ]);
    expect(trip).toMatchObject({ status: 'completed', delay_seconds: 120, delay_stop_sequence: 3, recorded: true, vehicle_ids: [bus], driver_ids: [driver], device_ids: [dev.deviceId] });
    expect(trip!.km).toEqual({ tk: 2.224, vk: 2.224, recorded_commercial_km: 2.224, off_itinerary_km: 0, reliable_km: 2.224, unreliable_km: 0, percent_km: 100 });
  });

  it('takes late reports into account, and never counts a stop skipped by a trip update as missed', async () => {
    // T2: departure from S1 only, then the trip ends: S2 and S3 are missed.
    await send(t, g, dev.auth, [
      item('trip_start', minute(59), ref('T2')),
      item('trip_event', minute(60, 30), { ...ref('T2'), event: 'departure', stop_sequence: 1, gps_valid: true }),
      item('trip_end', minute(80), ref('T2')),
    ]);
    let [trip] = await trackingOf(t.db, g, DATE, ['T2'], { now: new Date(minute(90)) });
    expect(trip!.stops.map((s) => s.status)).toEqual(['passed', 'missed', 'missed']);
    expect(trip!.status).toBe('partial');
    expect(trip!.delay_seconds).toBe(30);

    // The S3 arrival arrives late (a device backlog): it counts, and becomes the trip's delay.
    await send(t, g, dev.auth, [item('trip_event', minute(79), { ...ref('T2'), event: 'arrival', stop_sequence: 3, gps_valid: true })]);
    [trip] = await trackingOf(t.db, g, DATE, ['T2'], { now: new Date(minute(90)) });
    expect(trip!.stops.map((s) => s.status)).toEqual(['passed', 'missed', 'passed']);
    expect(trip!.delay_seconds).toBe(-60); // arrival 08:19Z = 09:19 local against 09:20 local: 60 s early

    // The operator skips S2 for the day: the trip is complete.
    const put = await inject(t, {
      method: 'PUT', url: `/api/v4/groups/${g}/trip-updates`, headers: operator.auth,
      payload: { update_id: 'skip-s2', kind: 'skip_stop', trip_id: 'T2', start_date: DATE, end_date: DATE, stop: { stop_id: 'S2' } },
    });
    expect(put.status).toBeLessThan(300);
    [trip] = await trackingOf(t.db, g, DATE, ['T2'], { now: new Date(minute(90)) });
    expect(trip!.stops.map((s) => s.status)).toEqual(['passed', 'skipped', 'passed']);
    expect(trip!.status).toBe('completed');
  });

  it('lists scheduled trips without records when named, with statuses from the clock', async () => {
    const before = await trackingOf(t.db, g, '2026-03-03', ['T1'], { now: new Date('2026-03-03T06:00:00Z') });
    expect(before.map((x) => [x.trip_id, x.status, x.recorded, x.stops.map((s) => s.status)])).toEqual([['T1', 'scheduled', false, ['pending', 'pending', 'pending']]]);
    // 15 minutes after the scheduled end (08:20 local = 07:20Z): not done.
    const after = await trackingOf(t.db, g, '2026-03-03', ['T1'], { now: new Date('2026-03-03T07:35:00Z') });
    expect(after[0]!.status).toBe('not_done');
    // Without names: only the trips recorded on the date.
    expect((await trackingOf(t.db, g, DATE)).map((x) => x.trip_id).sort()).toEqual(['T1', 'T2']);
  });
});

describe('trip tracking queue', () => {
  it('marks the trips of the reports a batch stores in the statement that stores them: batches of two devices on the same trips, at once and in opposite orders, all store (no deadlock), and a read counts both devices without any refresh after ingest', async () => {
    const day = '2026-03-09';
    const other = await newDevice(t, g);
    const pos = (trip: string, s: number) => item('position', new Date(Date.parse(`${day}T07:00:00Z`) + s * 1000).toISOString(), { lat: 48.85, lon: 2.35, gps_valid: true, trip_id: trip, service_date: day });
    // Straight to ingest, not through the route: nothing asks for a refresh after commit, so only the marks lead the read to these reports.
    const answers = await Promise.all(Array.from({ length: 8 }, (_, k) => {
      const trips = k % 2 ? ['T2', 'T1'] : ['T1', 'T2'];
      return ingestBatch(t.ctx, g, (k % 2 ? other : dev).deviceId, trips.flatMap((trip, i) => [pos(trip, k * 10 + 2 * i), pos(trip, k * 10 + 2 * i + 1)]));
    }));
    for (const a of answers) expect(a.answer.accepted).toHaveLength(4);
    const tracked = await trackingOf(t.db, g, day, ['T1', 'T2'], { now: new Date(`${day}T10:00:00Z`) });
    expect(tracked.map((x) => [x.trip_id, x.recorded, [...x.device_ids].sort()]).sort()).toEqual(['T1', 'T2'].map((trip) => [trip, true, [dev.deviceId, other.deviceId].sort()]));
  });

  it('device ingest gives each trip a batch touches its latest report in the batch (what the refresh after ingest orders the trips by)', async () => {
    const day = '2026-03-10';
    const pos = (trip: string, s: number) => item('position', new Date(Date.parse(`${day}T07:00:00Z`) + s * 1000).toISOString(), { lat: 48.85, lon: 2.35, gps_valid: true, trip_id: trip, service_date: day });
    const { touchedTrips } = await ingestBatch(t.ctx, g, dev.deviceId, [pos('T1', 30), pos('T2', 5), pos('T1', 40), pos('T1', 10)]);
    expect(touchedTrips.map((x) => [x.trip_id, x.reported_at]).sort()).toEqual([['T1', Date.parse(`${day}T07:00:40Z`)], ['T2', Date.parse(`${day}T07:00:05Z`)]]);
  });

  it('a round of the refresh after ingest takes its trips reported on most recently first (its chunks are committed in that order), every one of them', () => {
    const queue = (refs: TripRef[]) => new Map(refs.map((r) => [`${r.service_date} ${r.trip_id}`, r]));
    // A backlog of old reports, then the trips running now (reported last, at the end of the queue).
    const backlog = Array.from({ length: 1200 }, (_, i) => ({ trip_id: `old${i}`, service_date: DATE, reported_at: 1_000 + i }));
    const live = Array.from({ length: 3 }, (_, i) => ({ trip_id: `live${i}`, service_date: DATE, reported_at: 9_000_000 + i }));
    const round = roundOrder(queue([...backlog, ...live]));
    expect(round).toHaveLength(1203);
    expect(round.slice(0, 4).map((x) => x.trip_id)).toEqual(['live2', 'live1', 'live0', 'old1199']);
    expect(round.at(-1)?.trip_id).toBe('old0');
  });

  it('a round rests twice as long as it took, never more than REFRESH_REST_MAX_MS (a backlog\'s round of a minute rested two, the trips starting meanwhile out of the feeds), and starts at most every 250 ms', () => {
    expect(roundPeriod(50)).toBe(250);
    expect(roundPeriod(2_000)).toBe(6_000);
    expect(roundPeriod(60_000)).toBe(60_000 + REFRESH_REST_MAX_MS);
  });

  it('clears the mark of a recomputed trip (regression: marks in microseconds were compared with a Date in milliseconds and stayed, so every read recomputed the trip)', async () => {
    await send(t, g, dev.auth, [item('position', minute(5), { lat: 48.855, lon: 2.35, gps_valid: true, ...ref('T1') })]);
    await trackingOf(t.db, g, DATE, ['T1'], { now: new Date(minute(30)) });
    const marks = await t.db.query('SELECT trip_id FROM trip_tracking_dirty WHERE group_id = $1 AND service_date = $2', [g, DATE]);
    expect(marks).toEqual([]);
  });

  it('recomputes a trip once when it is read while a round recomputes it: the read waits for the round and finds it clean (it used to recompute it again after)', async () => {
    await send(t, g, dev.auth, [item('position', minute(6), { lat: 48.856, lon: 2.35, gps_valid: true, ...ref('T1') })]);
    const now = new Date(minute(30));
    await trackingOf(t.db, g, DATE, ['T1'], { now });
    await t.db.transaction((tx) => markDirty(tx, g, [ref('T1')]));
    // The same database, its statements counted: a recomputation reads the trip's events.
    const statements: string[] = [];
    const counted = new Proxy(t.db, {
      get(target, prop) {
        if (prop === 'query') return (sql: string, params?: unknown[]) => (statements.push(sql), target.query(sql, params));
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as Db;
    const [, [tracked]] = await Promise.all([refreshRound(counted, g, [ref('T1')]), trackingOf(counted, g, DATE, ['T1'], { now })]);
    // At most once: the service's own worker (every 5 s, not counted) may have taken the mark first.
    expect(statements.filter((q) => /FROM trip_events/.test(q)).length).toBeLessThanOrEqual(1);
    expect(tracked?.trip_id).toBe('T1');
    expect(await t.db.query('SELECT trip_id FROM trip_tracking_dirty WHERE group_id = $1 AND service_date = $2', [g, DATE])).toEqual([]);
  });
});
