/**
 * Predictions learned from a tracking history whose truth is known (issue #17, section 2).
 *
 * The history, and the live state of the day predicted, are written directly into the tracking
 * tables (trip_tracking, trip_tracking_stops: what tracking stores after computing the passages
 * from the device reports), not sent through the device API: the passages are what the model
 * learns from, and writing them is what makes their truth known to the second. The schedule is
 * a GTFS feed imported as usual.
 *
 * Line R1, S1 → S4, 5 minutes a segment, a trip every hour from 06:00 to 10:00 (T06 … T10); the
 * vehicle of T08 then runs U08 back (S4 → S1) at 08:17 (block B1). Truth on weekdays: every
 * segment takes 5 minutes ± 20 s, except S2 → S3 leaving in the 8 o'clock hour, which takes 8
 * (3 minutes slower), and at 9 o'clock it is 5 minutes ± 2 minutes (a wide spread). Dwell 30 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildModel, dayTypesOf, loadModel, SegmentIndex, startModelJob } from '../../src/domains/predictions/model.js';
import { predictTrips } from '../../src/domains/predictions/service.js';
import { fixedClock } from '../../src/platform/clock.js';
import { addDays, instantOf } from '../../src/platform/time.js';
import { inject, newGroup, newUser, setup, type TestApp } from '../helpers/app.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

const TZ = 'Europe/Paris';
const DAY = '2026-03-16'; // a Monday
const STOPS = ['S1', 'S2', 'S3', 'S4'];
const HOURS = [6, 7, 8, 9, 10];
const FEED = {
  'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\n' + STOPS.map((s, i) => `${s},Stop ${s},48.85${i},2.35`).join('\n') + '\n',
  'calendar.txt': 'service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,0,0,20260101,20261231\nSU,0,0,0,0,0,0,1,20260101,20261231\n',
  // 2026-04-06 (Easter Monday) runs the Sunday service.
  'calendar_dates.txt': 'service_id,date,exception_type\nWK,20260406,2\nSU,20260406,1\n',
  'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id\n' +
    HOURS.map((hh) => `R1,WK,T${pad(hh)},S4,0,${hh === 8 ? 'B1' : ''}`).join('\n') + '\nR1,WK,U08,S1,1,B1\n',
  'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\n' + [
    ...HOURS.flatMap((hh) => STOPS.map((s, i) => `T${pad(hh)},${clock(hh * 3600 + i * 300 - (i > 0 && i < 3 ? 30 : 0))},${clock(hh * 3600 + i * 300)},${s},${i + 1}`)),
    ...[...STOPS].reverse().map((s, i) => `U08,${clock(8 * 3600 + 17 * 60 + i * 300)},${clock(8 * 3600 + 17 * 60 + i * 300)},${s},${i + 1}`),
  ].join('\n') + '\n',
};
function pad(n: number) {
  return String(n).padStart(2, '0');
}
function clock(s: number) {
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}
const h = (hh: number, mm = 0, ss = 0) => hh * 3600 + mm * 60 + ss;

/** A deterministic noise in [-a, a] (a linear congruential generator). */
let seed = 17;
function noise(a: number): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return Math.round((seed / 2147483648) * 2 * a - a);
}

/** The true running time of the segment into stop index `to` (2: S2 → S3), leaving at `at`. */
function truth(to: number, at: number): number {
  if (to === 2 && at >= h(8) && at < h(9)) return 480 + noise(20);
  if (at >= h(9) && at < h(10)) return 300 + noise(120);
  return 300 + noise(20);
}

let t: TestApp;
let g: string;
const appClock = fixedClock('2026-03-16T04:00:00Z');

/**
 * Writes what tracking stores for one trip of `date`: passing times (seconds since the service
 * day's start; null: not passed) at each of the trip's stops, with arrival 30 s before the
 * passing time at the stops in between.
 */
async function seedTrip(date: string, tripId: string, passings: readonly (number | null)[], o: { direction?: number; block?: string | null; start?: number; stops?: readonly string[] } = {}) {
  const stops = o.stops ?? STOPS;
  const start = o.start ?? Number(tripId.slice(1)) * 3600;
  const at = (s: number | null) => (s === null ? null : instantOf(date, s, TZ));
  const passed = passings.flatMap((p, i) => (p === null ? [] : [i + 1]));
  await t.db.query(
    `INSERT INTO trip_tracking (group_id, service_date, trip_id, route_id, direction_id, block_id, start_time, scheduled_start_at, scheduled_end_at, started_at,
       end_reported, planned_stops, recorded_stops, unpassed_stops, last_passed_sequence, vk, recorded_commercial_km, off_itinerary_km, reliable_km, unreliable_km,
       positions, invalid_positions, boardings, alightings, max_load, doors, device_ids, vehicle_ids, driver_ids, computed_at)
     VALUES ($1, $2, $3, 'R1', $4, $5, $6, $7, $8, $9, false, $10, $11, $12, $13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}', '{BUS1}', '{}', now())`,
    [g, date, tripId, o.direction ?? 0, o.block ?? null, start, at(start), at(start + 900), at(passings[0] ?? start),
      stops.length, passed.length, stops.map((_, i) => i + 1).filter((q) => !passed.includes(q) && q < Math.max(0, ...passed)), passed.length ? Math.max(...passed) : null],
  );
  for (const [i, stop] of stops.entries()) {
    const p = passings[i] ?? null;
    const middle = i > 0 && i < stops.length - 1;
    await t.db.query(
      `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, scheduled_arrival_at, scheduled_departure_at, actual_at,
         actual_arrival_at, actual_departure_at, source, delay_seconds, doors_in, doors_out)
       VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $7, $9, $10, '{}', '{}')`,
      [g, date, tripId, i + 1, stop, at(start + i * 300), at(p), at(p === null ? null : middle ? p - 30 : p), p === null ? null : 'event', p === null ? null : p - (start + i * 300)],
    );
  }
}

/** The weekdays of the four weeks before DAY. */
const HISTORY_DATES = Array.from({ length: 28 }, (_, k) => addDays(DAY, -28 + k)).filter((d) => ![0, 6].includes(new Date(`${d}T12:00:00Z`).getUTCDay()));

beforeAll(async () => {
  // The clock (the model job's) is the morning of DAY; predictions are asked at times of their own.
  t = await setup({ clock: appClock });
  g = await newGroup(t, { timezone: TZ });
  await importZip(t, g, minimalZip(FEED), { publish: true });
  for (const date of HISTORY_DATES) {
    for (const hh of HOURS) {
      const passings = [h(hh) + noise(20)];
      for (let i = 1; i < STOPS.length; i++) passings.push(passings[i - 1]! + truth(i, passings[i - 1]!));
      await seedTrip(date, `T${pad(hh)}`, passings);
    }
  }
  // Three Saturdays at 8 where S2 → S3 takes 5 minutes: too few to be learned, and another day type anyway.
  for (const date of ['2026-02-21', '2026-02-28', '2026-03-07']) await seedTrip(date, 'T08', [h(8), h(8, 5), h(8, 10), h(8, 15)]);
}, 120_000);
afterAll(async () => t?.close());

const at = (s: number) => instantOf(DAY, s, TZ);
const ofDay = (d: Date) => (d.getTime() - instantOf(DAY, 0, TZ).getTime()) / 1000;

describe('prediction model', () => {
  it('learns the median running time, its spread and the dwell of each segment by day type and hour band', async () => {
    const started = Date.now();
    const r = await buildModel(t.db, g, at(h(5)), { historyDays: 28, bandSeconds: 3600 });
    console.log(`model build: ${r!.runs} runs, ${r!.segments} segments, ${r!.took_ms} ms (${Date.now() - started} ms around)`);
    expect(r).toMatchObject({ runs: HISTORY_DATES.length * HOURS.length * 3 + 9, history_from: addDays(DAY, -28), history_to: addDays(DAY, -1) });
    const rows = await t.db.query<{ n: number; median_run_s: number; p10_run_s: number; p90_run_s: number; median_dwell_s: number | null }>(
      `SELECT n, median_run_s, p10_run_s, p90_run_s, median_dwell_s FROM prediction_segments
       WHERE group_id = $1 AND pattern_key = 'R1|0' AND from_stop_id = 'S2' AND to_stop_id = 'S3' AND day_type = 'weekday' AND time_band = 8`,
      [g],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.n).toBe(HISTORY_DATES.length);
    expect(Math.abs(rows[0]!.median_run_s - 480)).toBeLessThanOrEqual(10);
    expect(rows[0]!.p90_run_s - rows[0]!.p10_run_s).toBeLessThanOrEqual(40);
    expect(rows[0]!.median_dwell_s).toBe(30);
    const saturday = await t.db.query<{ n: number }>(`SELECT n FROM prediction_segments WHERE group_id = $1 AND day_type = 'saturday' AND from_stop_id = 'S2' AND time_band = 8`, [g]);
    expect(saturday.map((s) => s.n)).toEqual([3]);
  });

  it("is read through the database handle once per build: the same route direction and bands again read no segment, a band not read yet is read, a build again (at the same clock time) is read anew", async () => {
    const q = { patternKeys: ['R1|0'], dayType: 'weekday' as const, from: h(8), to: h(8, 59) };
    const eight = ['R1|0', 'S2', 'S3', 8] as const;
    const learned = (await loadModel(t.db, g, q))!.segments.get(...eight)!.median_run_s;
    expect(Math.abs(learned - 480)).toBeLessThanOrEqual(10);
    try {
      // Segments change only with a build; changed behind the model's back, the memo still tells what it read.
      await t.db.query(`UPDATE prediction_segments SET median_run_s = median_run_s + 1000 WHERE group_id = $1 AND day_type = 'weekday'`, [g]);
      expect((await loadModel(t.db, g, q))!.segments.get(...eight)!.median_run_s).toBe(learned);
      // The 9 o'clock band was not read: it is, as stored now.
      const nine = (await loadModel(t.db, g, { ...q, to: h(9, 30) }))!.segments.get('R1|0', 'S2', 'S3', 9)!.median_run_s;
      expect(nine).toBeGreaterThan(1000);
    } finally {
      // Built again at the same clock time as the first build: another version, read anew.
      await buildModel(t.db, g, at(h(5)), { historyDays: 28, bandSeconds: 3600 });
    }
    expect((await loadModel(t.db, g, q))!.segments.get(...eight)!.median_run_s).toBe(learned);
    expect((await loadModel(t.db, g, { ...q, to: h(9, 30) }))!.segments.get('R1|0', 'S2', 'S3', 9)!.median_run_s).toBeLessThan(1000);
  });

  it('a segment index tells each segment by route direction, stops and band, none for any other, and counts each once', () => {
    const index = new SegmentIndex();
    const a = { n: 5, median_run_s: 60, p10_run_s: 50, p90_run_s: 80, median_dwell_s: null };
    const b = { ...a, median_run_s: 90 };
    index.set('R1|0', 'S1', 'S2', 8, a);
    index.set('R1|0', 'S1', 'S2', 9, b);
    index.set('R1|0', 'S1', 'S2', 9, b);
    expect([index.get('R1|0', 'S1', 'S2', 8), index.get('R1|0', 'S1', 'S2', 9), index.size]).toEqual([a, b, 2]);
    // Another band, stop pair, direction or route: none.
    expect([index.get('R1|0', 'S1', 'S2', 7), index.get('R1|0', 'S2', 'S1', 8), index.get('R1|1', 'S1', 'S2', 8), index.get('R1', 'S1', 'S2', 8), index.get('R1|0', 'S1', 'S2', -1)]).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('a model dropped is no model: null, and the schedule predicts', async () => {
    const saved = await t.db.query<Record<string, unknown>>('SELECT * FROM prediction_models WHERE group_id = $1', [g]);
    const q = { patternKeys: ['R1|0'], dayType: 'weekday' as const, from: h(8), to: h(9) };
    expect(await loadModel(t.db, g, q)).not.toBeNull();
    await t.db.query('DELETE FROM prediction_models WHERE group_id = $1', [g]);
    try {
      expect(await loadModel(t.db, g, q)).toBeNull();
    } finally {
      await buildModel(t.db, g, at(h(5)), { historyDays: 28, bandSeconds: 3600 });
    }
    expect(saved).toHaveLength(1);
    expect(await loadModel(t.db, g, q)).not.toBeNull();
  });

  it('day types follow the GTFS calendars: a weekday running the Sunday service is a Sunday', async () => {
    const types = await dayTypesOf(t.db, g, ['2026-04-06', '2026-04-07', '2026-04-11', '2026-04-12']);
    expect(Object.fromEntries(types)).toEqual({ '2026-04-06': 'sunday', '2026-04-07': 'weekday', '2026-04-11': 'saturday', '2026-04-12': 'sunday' });
  });

  it('a segment 3 minutes slower at 8 am on weekdays is predicted within 30 s; the naive baseline misses it by more than 2 minutes', async () => {
    await buildModel(t.db, g, at(h(5)), { historyDays: 28, bandSeconds: 3600 });
    // T08 left S1 a minute late; the truth from there: S2 08:06, S3 08:14, S4 08:19.
    await seedTrip(DAY, 'T08', [h(8, 1), null, null, null], { block: 'B1' });
    try {
      const now = at(h(8, 1, 30));
      const predictions = await predictTrips(t.ctx, g, DAY, { now });
      const t08 = predictions.find((p) => p.trip_id === 'T08')!;
      expect(t08.stops.map((s) => s.stop_id)).toEqual(['S2', 'S3', 'S4']);
      const truthAt = [h(8, 6), h(8, 14), h(8, 19)];
      const errors = t08.stops.map((s, i) => ofDay(s.departure_at) - truthAt[i]!);
      const naive = [h(8, 5), h(8, 10), h(8, 15)].map((s, i) => s + 60 - truthAt[i]!);
      console.log(`errors at S2, S3, S4 (s): model ${errors.join(', ')}; naive ${naive.join(', ')}`);
      for (const e of errors) expect(Math.abs(e)).toBeLessThanOrEqual(30);
      expect(Math.abs(naive[1]!)).toBeGreaterThan(120);
      expect(Math.abs(naive[2]!)).toBeGreaterThan(120);
      expect(t08.stops.every((s) => s.basis === 'history')).toBe(true);
      // The dwell learned: the bus arrives at S2 30 s before it leaves.
      expect(ofDay(t08.stops[0]!.departure_at) - ofDay(t08.stops[0]!.arrival_at)).toBe(30);
      expect(t08.stops[1]!.uncertainty_seconds).toBeGreaterThan(0);
      // The trip object shows them.
      const reader = await newUser(t, { groupId: g, role: 'operator' });
      appClock.set(now);
      const trip = await inject(t, { method: 'GET', url: `/api/v4/groups/${g}/trips/T08?date=${DAY}`, headers: reader.auth });
      expect(trip.status).toBe(200);
      const shown = (trip.json as { predictions: { stop_id: string; departure_at: string; uncertainty_seconds: number; basis: string }[] }).predictions;
      expect(shown).toEqual(t08.stops.map((s) => ({ stop_id: s.stop_id, stop_sequence: s.stop_sequence, arrival_at: s.arrival_at.toISOString(), departure_at: s.departure_at.toISOString(), uncertainty_seconds: s.uncertainty_seconds, basis: s.basis })));
    } finally {
      appClock.set(instantOf(DAY, h(5), TZ));
      await t.db.query('DELETE FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2', [g, DAY]);
      await t.db.query('DELETE FROM trip_tracking WHERE group_id = $1 AND service_date = $2', [g, DAY]);
    }
  });

  it('block propagation: the trip in progress ends within 30 s of the truth, the next trip of the block starts exactly at that arrival plus the 180 s minimum layover; thin history falls back to the schedule (exact)', async () => {
    await buildModel(t.db, g, at(h(5)), { historyDays: 28, bandSeconds: 3600 });
    // T08 left S3 at 08:15 (5 minutes late): S4 at about 08:20, so U08 (08:17) leaves at 08:23 at the earliest.
    await seedTrip(DAY, 'T08', [h(8), h(8, 5), h(8, 15), null], { block: 'B1' });
    try {
      const predictions = await predictTrips(t.ctx, g, DAY, { now: at(h(8, 15, 10)) });
      const t08 = predictions.find((p) => p.trip_id === 'T08')!;
      const u08 = predictions.find((p) => p.trip_id === 'U08')!;
      const end = ofDay(t08.stops[t08.stops.length - 1]!.arrival_at);
      expect(Math.abs(end - h(8, 20))).toBeLessThanOrEqual(30);
      expect(u08).toMatchObject({ from_trip_id: 'T08', block_id: 'B1', vehicle_ids: ['BUS1'] });
      expect(ofDay(u08.stops[0]!.departure_at)).toBe(end + 180);
      expect(u08.stops).toHaveLength(4);
      // Nothing was ever recorded on U08's direction: its running times are the schedule's.
      expect(u08.stops.slice(1).every((s) => s.basis === 'schedule')).toBe(true);
      expect(ofDay(u08.stops[1]!.departure_at) - ofDay(u08.stops[0]!.departure_at)).toBe(300);
    } finally {
      await t.db.query('DELETE FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2', [g, DAY]);
      await t.db.query('DELETE FROM trip_tracking WHERE group_id = $1 AND service_date = $2', [g, DAY]);
    }
  });

  it('terminal holding: a bus waiting at the first stop is predicted to leave at the scheduled start (exact), not before; the uncertainty widens with the residual spread (3× for a ±2 min spread against ±20 s)', async () => {
    await buildModel(t.db, g, at(h(5)), { historyDays: 28, bandSeconds: 3600 });
    await seedTrip(DAY, 'T09', [null, null, null, null]);
    await seedTrip(DAY, 'T07', [h(7), null, null, null]);
    try {
      const predictions = await predictTrips(t.ctx, g, DAY, { now: at(h(7, 0, 20)) });
      const t09 = predictions.find((p) => p.trip_id === 'T09')!;
      expect(t09.stops[0]).toMatchObject({ stop_id: 'S1' });
      expect(ofDay(t09.stops[0]!.departure_at)).toBe(h(9));
      // T09's segments spread ± 2 minutes, T07's ± 20 s.
      const t07 = predictions.find((p) => p.trip_id === 'T07')!;
      expect(t09.stops[3]!.uncertainty_seconds).toBeGreaterThan(3 * t07.stops[2]!.uncertainty_seconds);
    } finally {
      await t.db.query('DELETE FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2', [g, DAY]);
      await t.db.query('DELETE FROM trip_tracking WHERE group_id = $1 AND service_date = $2', [g, DAY]);
    }
  });

  it('a journey whose vehicle is not known, within the schedule horizon, is predicted from its scheduled departure with the learned running times (S3 within 30 s of the 3-minute-slower truth); beyond the horizon it is not', async () => {
    await buildModel(t.db, g, at(h(5)), { historyDays: 28, bandSeconds: 3600 });
    // 07:45, nothing reported on T08 (08:00) nor on its block: leaving S1 on time, the truth is S2 08:05, S3 08:13, S4 08:18.
    const now = at(h(7, 45));
    const within = await predictTrips(t.ctx, g, DAY, { now, scheduleHorizonSeconds: 20 * 60 });
    const t08 = within.find((p) => p.trip_id === 'T08')!;
    expect(t08).toMatchObject({ from_trip_id: null, vehicle_ids: [] });
    expect(t08.stops.map((s) => s.stop_id)).toEqual(['S1', 'S2', 'S3', 'S4']);
    expect(ofDay(t08.stops[0]!.departure_at)).toBe(h(8));
    const truthAt = [h(8, 5), h(8, 13), h(8, 18)];
    t08.stops.slice(1).forEach((s, i) => expect(Math.abs(ofDay(s.departure_at) - truthAt[i]!)).toBeLessThanOrEqual(30));
    // U08 (08:17) is the next trip of T08's block, but no vehicle is known: as far ahead, not within 20 minutes.
    expect(within.map((p) => p.trip_id).sort()).toEqual(['T08']);
    expect((await predictTrips(t.ctx, g, DAY, { now, scheduleHorizonSeconds: 10 * 60 })).map((p) => p.trip_id)).toEqual([]);
    expect(await predictTrips(t.ctx, g, DAY, { now })).toEqual([]);
  });

  it('regression: a trip tracked on stops its timetable lacks (another version) gets no prediction, and its trip object still answers', async () => {
    // Passed its stop 5 (S9), which the timetable in force does not have.
    await seedTrip(DAY, 'T10', [h(10), h(10, 5), h(10, 10), h(10, 15), h(10, 20), null], { stops: ['S1', 'S2', 'S3', 'S4', 'S9', 'S8'] });
    await t.db.query('DELETE FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2 AND stop_sequence < 5', [g, DAY]);
    try {
      const now = at(h(10, 21));
      expect(await predictTrips(t.ctx, g, DAY, { now })).toEqual([]);
      const reader = await newUser(t, { groupId: g, role: 'operator' });
      appClock.set(now);
      const trip = await inject(t, { method: 'GET', url: `/api/v4/groups/${g}/trips/T10?date=${DAY}`, headers: reader.auth });
      expect(trip.status).toBe(200);
      expect(trip.json.status).toBe('in_progress');
      expect(trip.json.predictions).toEqual([]);
    } finally {
      appClock.set(instantOf(DAY, h(5), TZ));
      await t.db.query('DELETE FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2', [g, DAY]);
      await t.db.query('DELETE FROM trip_tracking WHERE group_id = $1 AND service_date = $2', [g, DAY]);
    }
  });

  it('the model job builds a stale model at start, and skips a fresh one', async () => {
    await t.db.query('DELETE FROM prediction_models WHERE group_id = $1', [g]);
    await t.db.query('DELETE FROM prediction_segments WHERE group_id = $1', [g]);
    const stop = startModelJob(t.ctx, { firstMs: 1, checkMs: 50 });
    try {
      const deadline = Date.now() + 60_000;
      let built: { built_at: Date }[] = [];
      while (built.length === 0 && Date.now() < deadline) {
        built = await t.db.query<{ built_at: Date }>('SELECT built_at FROM prediction_models WHERE group_id = $1', [g]);
        if (built.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(built).toHaveLength(1);
      const [{ n }] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM prediction_segments WHERE group_id = $1', [g]) as [{ n: number }];
      expect(n).toBeGreaterThan(0);
      // Fresh now: later checks leave it alone.
      await new Promise((r) => setTimeout(r, 300));
      const again = await t.db.query<{ built_at: Date }>('SELECT built_at FROM prediction_models WHERE group_id = $1', [g]);
      expect(again[0]!.built_at.getTime()).toBe(built[0]!.built_at.getTime());
    } finally {
      await stop();
    }
  });
});
