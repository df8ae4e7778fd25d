/**
 * The measured accuracy of the predictions (issue #17, section 3).
 *
 * Scoring: the samples and the actual passages are written directly (prediction_sample_sets, and
 * trip_tracking_stops as tracking stores it), so every error is known to the second and every
 * figure below is computed by hand. Sampling: a trip in progress written directly into the
 * tracking tables (as in model.test.ts) on a GTFS feed imported as usual; the sampler runs
 * through the same predictTrips as the feeds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { predictTrips } from '../../src/domains/predictions/service.js';
import { pruneSamples, samplePredictions, startSampleJob } from '../../src/domains/predictions/samples.js';
import { fixedClock } from '../../src/platform/clock.js';
import { instantOf } from '../../src/platform/time.js';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

let t: TestApp;
let g: string;
let reader: TestUser;
const D1 = '2026-03-16';
const D2 = '2026-03-17';
const iso = (date: string, hhmmss: string) => new Date(`${date}T${hhmmss}Z`);

/** A stop of a trip as tracking stores it; `arrival` null: not passed. */
async function passage(date: string, trip: string, seq: number, arrival: Date | null) {
  await t.db.query(
    `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, actual_at, actual_arrival_at, source, doors_in, doors_out)
     VALUES ($1, $2, $3, $4, $5, $6, $6, $7, '{}', '{}')`,
    [g, date, trip, seq, `S${seq}`, arrival, arrival ? 'event' : null],
  );
}

/** A sample: what was published at `at` for the trip and stop (a trip's row of that minute with this one stop: migration 0021). */
async function sample(date: string, route: string, trip: string, seq: number, at: Date, predicted: Date) {
  const offset = predicted.getTime() - at.getTime();
  await t.db.query(
    `INSERT INTO prediction_sample_sets (group_id, service_date, trip_id, sampled_minute, route_id, sampled_at, stop_sequences, stop_ids, arrivals_ms, departures_ms, uncertainties_s, bases)
     VALUES ($1, $2, $3, date_trunc('minute', $5::timestamptz), $6, $5, ARRAY[$4::int], ARRAY[$7], ARRAY[$8::int], ARRAY[$8::int], '{30}', '{history}')`,
    [g, date, trip, seq, at, route, `S${seq}`, offset],
  );
}

const STATS_FEED = {
  'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,One,48.85,2.35\nS2,Two,48.86,2.35\nS3,Three,48.87,2.35\nS4,Four,48.88,2.35\n',
  'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id\nR1,WK,T08,S4,0,\n',
  'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT08,08:00:00,08:00:00,S1,1\nT08,08:05:00,08:05:00,S2,2\nT08,08:10:00,08:10:00,S3,3\nT08,08:15:00,08:15:00,S4,4\n',
};
const TZ = 'Europe/Paris';
const clock = fixedClock('2026-03-18T05:00:00Z');

beforeAll(async () => {
  t = await setup({ clock });
  g = await newGroup(t, { timezone: TZ });
  reader = await newUser(t, { groupId: g, role: 'reader' });
  await importZip(t, g, minimalZip(STATS_FEED), { publish: true });

  // D1, route R1, trip A, stop 2: the bus arrived at 08:30:00. Errors (predicted − actual) at T minutes before:
  // T=5 +30 s (accurate: −112 … +110), T=4 +200 s (late: > 60·ln(5.3) = 100), T=3 −120 s (early: < −60·ln(4.5) = −90), T=2 0 s; nothing at T=1.
  await passage(D1, 'A', 2, iso(D1, '08:30:00'));
  await sample(D1, 'R1', 'A', 2, iso(D1, '08:25:00'), iso(D1, '08:30:30'));
  await sample(D1, 'R1', 'A', 2, iso(D1, '08:26:00'), iso(D1, '08:33:20'));
  await sample(D1, 'R1', 'A', 2, iso(D1, '08:27:00'), iso(D1, '08:28:00'));
  await sample(D1, 'R1', 'A', 2, iso(D1, '08:28:00'), iso(D1, '08:30:00'));
  // Not scored: 40 minutes before the arrival, and after it.
  await sample(D1, 'R1', 'A', 2, iso(D1, '07:50:00'), iso(D1, '08:40:00'));
  await sample(D1, 'R1', 'A', 2, iso(D1, '08:31:00'), iso(D1, '08:31:00'));
  // D1, route R2, trip B, stop 1: arrived 09:00:00; T=10 −60 s (accurate: ≥ −60·ln(11.5) = −147), T=9 +30 s.
  await passage(D1, 'B', 1, iso(D1, '09:00:00'));
  await sample(D1, 'R2', 'B', 1, iso(D1, '08:50:00'), iso(D1, '08:59:00'));
  await sample(D1, 'R2', 'B', 1, iso(D1, '08:51:00'), iso(D1, '09:00:30'));
  // A stop never passed is not scored.
  await passage(D1, 'C', 3, null);
  await sample(D1, 'R2', 'C', 3, iso(D1, '10:00:00'), iso(D1, '10:05:00'));
  // D2, route R1, trip A, stop 2: arrived 08:30:00; T=25 +180 s (accurate: ≤ 60·ln(26.3) = 196).
  await passage(D2, 'A', 2, iso(D2, '08:30:00'));
  await sample(D2, 'R1', 'A', 2, iso(D2, '08:05:00'), iso(D2, '08:33:00'));
});
afterAll(async () => t?.close());

type Figures = Record<string, number | null> & { by_horizon: (Record<string, number | null>)[] };
const stats = async (q: string, user: TestUser = reader) => inject(t, { url: `/api/v4/groups/${g}/stats/predictions?${q}`, headers: user.auth });

describe('stats/predictions', () => {
  it('answers the Cal-ITP metrics computed by hand: accuracy, early/on-time/late, median and IQR, completeness, wobble, in total, by day, by route and by horizon band', async () => {
    const res = await stats(`start_date=${D1}&end_date=${D2}`);
    expect(res.status).toBe(200);
    const body = res.json as { total: Figures; by_day: (Figures & { service_date: string })[]; by_route: (Figures & { route_id: string })[] };
    const { by_horizon: totalBands, ...total } = body.total;
    expect(total).toEqual({
      predictions: 7, accurate: 5, accuracy_percent: 71.4, early_percent: 14.3, on_time_percent: 71.4, late_percent: 14.3,
      // errors −120, −60, 0, 30, 30, 180, 200
      median_error_seconds: 30, p25_error_seconds: -30, p75_error_seconds: 105, iqr_error_seconds: 135,
      // A/D1: bins 0..5, 4 with a sample; B: bins 0..10, 2; A/D2: bins 0..25, 1
      minute_bins: 43, complete_minute_bins: 7, completeness_percent: 16.3,
      // |Δ| 170, 320, 120 (A/D1), 90 (B)
      wobble_pairs: 4, median_wobble_seconds: 145,
    });
    expect(totalBands.map((b) => [b.from_minutes, b.to_minutes, b.predictions, b.accuracy_percent, b.late_percent, b.early_percent, b.minute_bins, b.complete_minute_bins, b.median_wobble_seconds])).toEqual([
      [0, 5, 3, 33.3, 33.3, 33.3, 15, 3, 170],
      [5, 10, 2, 100, 0, 0, 11, 2, 90],
      [10, 20, 1, 100, 0, 0, 11, 1, null],
      [20, 30, 1, 100, 0, 0, 6, 1, null],
    ]);
    const pick = (f: Figures) => [f.predictions, f.accuracy_percent, f.median_error_seconds, f.p25_error_seconds, f.p75_error_seconds, f.iqr_error_seconds, f.minute_bins, f.complete_minute_bins, f.completeness_percent, f.wobble_pairs, f.median_wobble_seconds];
    expect(body.by_day.map((d) => [d.service_date, ...pick(d)])).toEqual([
      [D1, 6, 66.7, 15, -45, 30, 75, 17, 6, 35.3, 4, 145],
      [D2, 1, 100, 180, 180, 180, 0, 26, 1, 3.8, 0, null],
    ]);
    expect(body.by_route.map((r) => [r.route_id, ...pick(r)])).toEqual([
      ['R1', 5, 60, 30, 0, 180, 180, 32, 5, 15.6, 3, 170],
      ['R2', 2, 100, -15, -37.5, 7.5, 45, 11, 2, 18.2, 1, 90],
    ]);
    expect(body.by_day[0]!.by_horizon).toHaveLength(4);
  });

  it('an empty period answers zeros and nulls', async () => {
    const res = await stats('start_date=2026-01-01&end_date=2026-01-02');
    expect(res.status).toBe(200);
    const body = res.json as { total: Figures; by_day: unknown[]; by_route: unknown[] };
    expect(body.by_day).toEqual([]);
    expect(body.by_route).toEqual([]);
    expect(body.total).toMatchObject({ predictions: 0, accuracy_percent: null, minute_bins: 0, completeness_percent: null, median_wobble_seconds: null });
  });

  it('a period over 31 days, or ending before it starts, is a 422 naming end_date; a driver gets 403', async () => {
    const long = await stats('start_date=2026-01-01&end_date=2026-03-01');
    expect(long.status).toBe(422);
    expect(JSON.stringify(long.json)).toContain('end_date');
    const reversed = await stats(`start_date=${D2}&end_date=${D1}`);
    expect(reversed.status).toBe(422);
    const driver = await newUser(t, { groupId: g, role: 'driver' });
    expect((await stats(`start_date=${D1}&end_date=${D1}`, driver)).status).toBe(403);
  });

  it('a caller limited to teams gets the trips whose recorded vehicle is in their teams only', async () => {
    const north = await newTeam(t, g, 'north');
    await t.db.query(`INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate, teams) VALUES ($1, 'VN', '101', 'AA-101-AA', $2)`, [g, [north]]);
    // Trip B of D1 (route R2) was run by VN; trip A by nobody of north.
    await t.db.query(
      `INSERT INTO trip_tracking (group_id, service_date, trip_id, route_id, end_reported, planned_stops, recorded_stops, unpassed_stops, vk, recorded_commercial_km, off_itinerary_km,
         reliable_km, unreliable_km, positions, invalid_positions, boardings, alightings, max_load, doors, device_ids, vehicle_ids, driver_ids, computed_at)
       VALUES ($1, $2, 'B', 'R2', true, 1, 1, '{}', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}', '{VN}', '{}', now())`,
      [g, D1],
    );
    try {
      const limited = await newUser(t, { groupId: g, role: 'reader', teams: [north] });
      const res = await stats(`start_date=${D1}&end_date=${D2}`, limited);
      expect(res.status).toBe(200);
      const body = res.json as { total: Figures; by_route: (Figures & { route_id: string })[] };
      expect(body.total).toMatchObject({ predictions: 2, accuracy_percent: 100, minute_bins: 11, complete_minute_bins: 2 });
      expect(body.by_route.map((r) => r.route_id)).toEqual(['R2']);
      // The whole group still sees everything.
      expect(((await stats(`start_date=${D1}&end_date=${D2}`)).json as { total: Figures }).total.predictions).toBe(7);
    } finally {
      await t.db.query(`DELETE FROM trip_tracking WHERE group_id = $1 AND trip_id = 'B'`, [g]);
    }
  });
});

describe('prediction sampler', () => {
  const at = (s: number) => instantOf(D1, s, TZ);
  beforeAll(async () => {
    // T08 of D1 (a Monday) in progress: it left S1 at 08:01 local; no model: the schedule's running times.
    await t.db.query(
      `INSERT INTO trip_tracking (group_id, service_date, trip_id, route_id, direction_id, start_time, scheduled_start_at, scheduled_end_at, started_at,
         end_reported, planned_stops, recorded_stops, unpassed_stops, last_passed_sequence, vk, recorded_commercial_km, off_itinerary_km, reliable_km, unreliable_km,
         positions, invalid_positions, boardings, alightings, max_load, doors, device_ids, vehicle_ids, driver_ids, computed_at)
       VALUES ($1, $2, 'T08', 'R1', 0, 28800, $3, $4, $5, false, 4, 1, '{}', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}', '{BUS1}', '{}', now())`,
      [g, D1, at(8 * 3600), at(8 * 3600 + 900), at(8 * 3600 + 60)],
    );
    for (let i = 0; i < 4; i++) {
      await t.db.query(
        `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, scheduled_arrival_at, scheduled_departure_at, actual_at, actual_arrival_at, actual_departure_at, source, delay_seconds, doors_in, doors_out)
         VALUES ($1, $2, 'T08', $3, $4, $5, $5, $6, $6, $6, $7, $8, '{}', '{}')`,
        [g, D1, i + 1, `S${i + 1}`, at(8 * 3600 + i * 300), i === 0 ? at(8 * 3600 + 60) : null, i === 0 ? 'event' : null, i === 0 ? 60 : null],
      );
    }
  });

  const rows = () => t.db.query<{ stop_sequence: number; sampled_at: Date; horizon_s: number; predicted_arrival_at: Date; route_id: string }>(
    `SELECT stop_sequence, sampled_at, horizon_s, predicted_arrival_at, route_id FROM prediction_samples WHERE group_id = $1 AND trip_id = 'T08' ORDER BY sampled_at, stop_sequence`, [g]);

  it('records each stop ahead once a minute with its horizon: twice in the same minute records once, a minute later again', async () => {
    const now = at(8 * 3600 + 90);
    const published = (await predictTrips(t.ctx, g, D1, { now })).find((p) => p.trip_id === 'T08')!;
    expect(published.stops.map((s) => s.stop_sequence)).toEqual([2, 3, 4]);
    expect(await samplePredictions(t.ctx, { now, groupId: g })).toBe(3);
    let r = await rows();
    expect(r.map((x) => [x.stop_sequence, x.route_id, x.horizon_s, new Date(x.predicted_arrival_at).getTime()])).toEqual(
      published.stops.map((s) => [s.stop_sequence, 'R1', Math.round((s.arrival_at.getTime() - now.getTime()) / 1000), s.arrival_at.getTime()]),
    );
    // The schedule's 5 minutes a segment from the 08:01 departure: S2 at about 08:06, 4.5 minutes ahead.
    expect(Math.abs(r[0]!.horizon_s - 270)).toBeLessThanOrEqual(30);
    expect(await samplePredictions(t.ctx, { now: at(8 * 3600 + 110), groupId: g })).toBe(0);
    expect(await rows()).toHaveLength(3);
    expect(await samplePredictions(t.ctx, { now: at(8 * 3600 + 150), groupId: g })).toBe(3);
    r = await rows();
    expect(r).toHaveLength(6);
    expect(r[3]!.horizon_s).toBe(r[0]!.horizon_s - 60);
  });

  it('leaves out the stops predicted beyond the horizon bound', async () => {
    const ctx = { ...t.ctx, config: { ...t.ctx.config, predictionSamples: { ...t.ctx.config.predictionSamples, maxHorizonMinutes: 10 } } };
    // At 08:03:30, S2 is about 2.5 minutes ahead, S3 7.5, S4 12.5: S4 is left out.
    expect(await samplePredictions(ctx, { now: at(8 * 3600 + 210), groupId: g })).toBe(2);
    const r = (await rows()).filter((x) => new Date(x.sampled_at).getTime() === at(8 * 3600 + 210).getTime());
    expect(r.map((x) => x.stop_sequence)).toEqual([2, 3]);
    expect(r.every((x) => x.horizon_s <= 600)).toBe(true);
  });

  it('records a minute of more samples than one statement takes (chunks of chunkRows), every one of them', async () => {
    const now = at(8 * 3600 + 270);
    const published = (await predictTrips(t.ctx, g, D1, { now })).find((p) => p.trip_id === 'T08')!;
    expect(published.stops.length).toBeGreaterThan(1);
    expect(await samplePredictions(t.ctx, { now, groupId: g, chunkRows: 1 })).toBe(published.stops.length);
    const r = (await rows()).filter((x) => new Date(x.sampled_at).getTime() === now.getTime());
    expect(r.map((x) => [x.stop_sequence, new Date(x.predicted_arrival_at).getTime()])).toEqual(published.stops.map((s) => [s.stop_sequence, s.arrival_at.getTime()]));
  });

  it('the job samples by itself each round and stops with the application (awaiting a round under way)', async () => {
    const minute = at(8 * 3600 + 300);
    clock.set(minute);
    const stop = startSampleJob(t.ctx, { everyMs: 20 });
    try {
      const deadline = Date.now() + 30_000;
      while ((await rows()).filter((x) => new Date(x.sampled_at).getTime() === minute.getTime()).length < 3) {
        if (Date.now() > deadline) throw new Error('the job recorded nothing within 30 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await stop();
    }
    // Stopped: a minute later nothing more is recorded.
    const later = at(8 * 3600 + 360);
    clock.set(later);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await rows()).filter((x) => new Date(x.sampled_at).getTime() === later.getTime())).toEqual([]);
    clock.set(new Date('2026-03-18T05:00:00Z'));
  });

  it('retention deletes the samples of service dates older than the retention days', async () => {
    await sample('2025-01-10', 'R1', 'OLD', 1, iso('2025-01-10', '08:00:00'), iso('2025-01-10', '08:05:00'));
    expect(await pruneSamples(t.db, iso(D2, '12:00:00'), 90)).toBe(1);
    const left = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM prediction_samples WHERE group_id = $1 AND service_date = $2`, [g, D1]);
    expect(left[0]!.n).toBeGreaterThan(0);
  });
});
