/**
 * How good the published predictions are (issue #17, section 3), measured as the Cal-ITP GTFS-RT
 * Trip Updates metrics measure it (docs/predictions.md, "Measured"):
 *
 * - The sampler records what predictTrips publishes (the feeds publish it): for each trip and stop
 *   ahead, at most once per clock minute, the predicted arrival and its horizon (predicted arrival
 *   minus the sampling time), stops farther ahead than maxHorizonMinutes left out. One insert per
 *   group and date, whatever the number of trips.
 * - predictionStats scores the samples against the actual arrivals of the tracking tables, joined
 *   when it answers (a passage recomputed later is scored as it stands), set-based in SQL.
 */
import type { AppContext } from '../../platform/context.js';
import type { Db } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import type { Period } from '../../platform/time.js';
import { scheduleMemoOf } from '../gtfs/schedule-memo.js';
import { predictTrips } from './service.js';

/** The window scored before each actual arrival, in minutes (Cal-ITP: 30). */
export const WINDOW_MINUTES = 30;
/** The horizon bands, minutes to the actual arrival: [from, to). */
export const HORIZON_BANDS = [[0, 5], [5, 10], [10, 20], [20, 30]] as const;
/** A one-minute bin is complete with this many samples (at most one a minute is recorded: see docs/predictions.md). */
export const COMPLETE_BIN_SAMPLES = 1;


/** Samples what the predictions publish now for every group and date with a trip in progress; returns the rows recorded. */
export async function samplePredictions(ctx: AppContext, o: { now?: Date; groupId?: string } = {}): Promise<number> {
  const now = o.now ?? ctx.clock.now();
  const maxHorizonS = ctx.config.predictionSamples.maxHorizonMinutes * 60;
  // A trip in progress was started within the last hours (a trip is over an hour after its end at the latest). Per
  // group, through the key of trip_tracking (group_id, service_date): the last few dates of each group are read, never the history.
  const candidates = await ctx.db.query<{ group_id: string; service_date: string }>(
    `SELECT g.group_id, d.service_date FROM groups g
     CROSS JOIN LATERAL (
       SELECT DISTINCT t.service_date::text AS service_date FROM trip_tracking t
       WHERE t.group_id = g.group_id
         AND t.service_date BETWEEN ($1::timestamptz AT TIME ZONE 'UTC')::date - 2 AND ($1::timestamptz AT TIME ZONE 'UTC')::date + 1
         AND NOT t.end_reported AND COALESCE(t.last_report_at, t.started_at) >= $1::timestamptz - interval '12 hours') d
     WHERE $2::text IS NULL OR g.group_id = $2
     ORDER BY 1, 2`,
    [now, o.groupId ?? null],
  );
  let recorded = 0;
  for (const { group_id: groupId, service_date: date } of candidates) {
    // The day's whole schedule, as the feeds read it (gtfs/schedule-memo.ts: read once per version and date).
    const day = await scheduleMemoOf(ctx.db).dayOf(ctx.db, groupId, undefined, date);
    const predictions = await predictTrips(ctx, groupId, date, { now, schedule: day });
    if (predictions.length === 0) continue;
    const routes = new Map(day.trips.map((t) => [t.trip_id, t.route_id]));
    const cols = { trip: [] as string[], seq: [] as number[], stop: [] as string[], route: [] as string[], arr: [] as string[], dep: [] as string[], unc: [] as number[], hor: [] as number[], basis: [] as string[] };
    for (const p of predictions) {
      const route = routes.get(p.trip_id);
      if (route === undefined) continue;
      for (const s of p.stops) {
        const horizon = Math.round((s.arrival_at.getTime() - now.getTime()) / 1000);
        if (horizon > maxHorizonS) continue;
        cols.trip.push(p.trip_id);
        cols.seq.push(s.stop_sequence);
        cols.stop.push(s.stop_id);
        cols.route.push(route);
        cols.arr.push(s.arrival_at.toISOString());
        cols.dep.push(s.departure_at.toISOString());
        cols.unc.push(s.uncertainty_seconds);
        cols.hor.push(horizon);
        cols.basis.push(s.basis);
      }
    }
    if (cols.trip.length === 0) continue;
    const rows = await ctx.db.query<{ n: number }>(
      `WITH ins AS (
         INSERT INTO prediction_samples (group_id, service_date, trip_id, stop_sequence, sampled_minute, stop_id, route_id, sampled_at,
           predicted_arrival_at, predicted_departure_at, uncertainty_s, horizon_s, basis)
         SELECT $1, $2::date, u.trip_id, u.seq, date_trunc('minute', $3::timestamptz), u.stop_id, u.route_id, $3::timestamptz, u.arr, u.dep, u.unc, u.hor, u.basis
         FROM unnest($4::text[], $5::int[], $6::text[], $7::text[], $8::timestamptz[], $9::timestamptz[], $10::int[], $11::int[], $12::text[])
           AS u(trip_id, seq, stop_id, route_id, arr, dep, unc, hor, basis)
         ON CONFLICT DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
      [groupId, date, now, cols.trip, cols.seq, cols.stop, cols.route, cols.arr, cols.dep, cols.unc, cols.hor, cols.basis],
    );
    recorded += rows[0]!.n;
  }
  return recorded;
}

/** Deletes the samples of service dates more than retentionDays before now; returns how many. */
export async function pruneSamples(db: Db, now: Date, retentionDays: number): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `WITH d AS (DELETE FROM prediction_samples WHERE service_date < ($1::timestamptz AT TIME ZONE 'UTC')::date - $2::int RETURNING 1) SELECT count(*)::int AS n FROM d`,
    [now, retentionDays],
  );
  return rows[0]!.n;
}

/** The sampler: a round each minute (and retention once an hour) while the application runs. */
export function startSampleJob(ctx: AppContext, o: { everyMs?: number } = {}): () => Promise<void> {
  let stopped = false;
  let busy = false;
  let lastPrune = 0;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    if (busy || stopped) return;
    busy = true;
    running = (async () => {
      const now = ctx.clock.now();
      await samplePredictions(ctx, { now });
      if (now.getTime() - lastPrune >= 3_600_000) {
        lastPrune = now.getTime();
        await pruneSamples(ctx.db, now, ctx.config.predictionSamples.retentionDays);
      }
    })()
      .catch((err: unknown) => ctx.log.warn({ err }, 'prediction sampler failed; it retries at its next round'))
      .finally(() => (busy = false));
  };
  const timer = setInterval(tick, o.everyMs ?? 60_000);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

export interface ScoreFigures {
  predictions: number;
  accurate: number;
  accuracy_percent: number | null;
  early_percent: number | null;
  on_time_percent: number | null;
  late_percent: number | null;
  median_error_seconds: number | null;
  p25_error_seconds: number | null;
  p75_error_seconds: number | null;
  iqr_error_seconds: number | null;
  minute_bins: number;
  complete_minute_bins: number;
  completeness_percent: number | null;
  wobble_pairs: number;
  median_wobble_seconds: number | null;
}

type Key = string;
const keyOf = (r: { gd: number; gr: number; service_date: string | null; route_id: string | null; band: number | null }) =>
  `${r.gd === 0 ? `d${r.service_date}` : r.gr === 0 ? `r${r.route_id}` : 't'}|${r.band ?? ''}`;

/** The band (its lower bound, minutes) of a number of minutes to the arrival. */
const bandOf = (x: string) => `CASE ${HORIZON_BANDS.map(([lo, hi]) => `WHEN ${x} >= ${lo} AND ${x} < ${hi} THEN ${lo}`).join(' ')} END`;

// Samples scored: the actual arrival known, sampled in the WINDOW_MINUTES before it. e: predicted − actual (s), t: minutes to the actual arrival.
const SCORED = `
  s AS MATERIALIZED (
    SELECT p.service_date::text AS service_date, p.route_id, p.trip_id, p.stop_sequence, p.sampled_at, p.predicted_arrival_at,
      EXTRACT(EPOCH FROM (p.predicted_arrival_at - COALESCE(a.actual_arrival_at, a.actual_at)))::float8 AS e,
      EXTRACT(EPOCH FROM (COALESCE(a.actual_arrival_at, a.actual_at) - p.sampled_at))::float8 / 60 AS t
    FROM prediction_samples p
    JOIN trip_tracking_stops a ON a.group_id = p.group_id AND a.service_date = p.service_date AND a.trip_id = p.trip_id AND a.stop_sequence = p.stop_sequence
    WHERE p.group_id = $1 AND p.service_date BETWEEN $2::date AND $3::date
      AND COALESCE(a.actual_arrival_at, a.actual_at) IS NOT NULL
      AND p.sampled_at <= COALESCE(a.actual_arrival_at, a.actual_at)
      AND p.sampled_at > COALESCE(a.actual_arrival_at, a.actual_at) - make_interval(mins => ${WINDOW_MINUTES})
      AND ($4::text[] IS NULL OR EXISTS (
        SELECT 1 FROM trip_tracking tt WHERE tt.group_id = p.group_id AND tt.service_date = p.service_date AND tt.trip_id = p.trip_id
          AND (EXISTS (SELECT 1 FROM vehicles v WHERE v.group_id = tt.group_id AND v.vehicle_id = ANY (tt.vehicle_ids) AND v.teams && $4::text[])
            OR EXISTS (SELECT 1 FROM drivers d WHERE d.group_id = tt.group_id AND d.driver_id = ANY (tt.driver_ids) AND d.teams && $4::text[]))))
  ),
  b AS MATERIALIZED (
    SELECT s.*, ${bandOf('s.t')} AS band, floor(s.t)::int AS k,
      -60 * ln(s.t + 1.5) AS lo, 60 * ln(s.t + 1.3) AS hi
    FROM s
  )`;
const SETS = 'GROUPING SETS ((service_date, band), (service_date), (route_id, band), (route_id), (band), ())';
const KEYS = 'service_date, route_id, band, GROUPING(service_date) AS gd, GROUPING(route_id) AS gr';

/** The figures of stats/predictions: in total, by day and by route, each also by horizon band. */
export async function predictionStats(db: Db, scope: Pick<GroupScope, 'groupId' | 'teams'>, p: Period) {
  const params = [scope.groupId, p.start, p.end, scope.teams === null ? null : [...scope.teams]];
  type Keyed = { gd: number; gr: number; service_date: string | null; route_id: string | null; band: number | null };
  // One statement, the scored samples read once: kind e (errors), w (wobble), b (bins expected), c (bins complete).
  const rows = await db.query<Keyed & { kind: 'e' | 'w' | 'b' | 'c'; n: number; accurate: number; early: number; late: number; p25: number | null; p50: number | null; p75: number | null }>(
    `WITH ${SCORED},
     w AS (
       SELECT service_date, route_id, band,
         abs(EXTRACT(EPOCH FROM (predicted_arrival_at - lag(predicted_arrival_at) OVER (PARTITION BY service_date, trip_id, stop_sequence ORDER BY sampled_at))))::float8 AS d
       FROM b),
     -- The one-minute bins holding samples (k ≤ T < k+1), and each stop's first bin.
     pb AS (SELECT service_date, route_id, trip_id, stop_sequence, k, band FROM b GROUP BY 1, 2, 3, 4, 5, 6),
     ps AS (SELECT service_date, route_id, max(k) AS first_k FROM pb GROUP BY service_date, route_id, trip_id, stop_sequence),
     -- The bins of each band from the first one to the arrival: max(0, min(first_k, hi − 1) − lo + 1).
     bins AS (
       SELECT ps.service_date, ps.route_id, h.lo AS band, GREATEST(0, LEAST(ps.first_k, h.hi - 1) - h.lo + 1) AS n
       FROM ps CROSS JOIN (VALUES ${HORIZON_BANDS.map(([lo, hi]) => `(${lo}, ${hi})`).join(', ')}) AS h(lo, hi))
     SELECT 'e' AS kind, ${KEYS}, count(*)::int AS n,
       count(*) FILTER (WHERE e >= lo AND e <= hi)::int AS accurate,
       count(*) FILTER (WHERE e < lo)::int AS early,
       count(*) FILTER (WHERE e > hi)::int AS late,
       percentile_cont(0.25) WITHIN GROUP (ORDER BY e) AS p25,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY e) AS p50,
       percentile_cont(0.75) WITHIN GROUP (ORDER BY e) AS p75
     FROM b GROUP BY ${SETS}
     UNION ALL
     SELECT 'w', ${KEYS}, count(*)::int, 0, 0, 0, NULL, percentile_cont(0.5) WITHIN GROUP (ORDER BY d), NULL
     FROM w WHERE d IS NOT NULL GROUP BY ${SETS}
     UNION ALL
     SELECT 'b', ${KEYS}, COALESCE(sum(n), 0)::int, 0, 0, 0, NULL, NULL, NULL FROM bins GROUP BY ${SETS}
     UNION ALL
     SELECT 'c', ${KEYS}, count(*)::int, 0, 0, 0, NULL, NULL, NULL FROM pb GROUP BY ${SETS}`,
    params,
  );

  const figures = new Map<Key, ScoreFigures>();
  const blank = (): ScoreFigures => ({
    predictions: 0, accurate: 0, accuracy_percent: null, early_percent: null, on_time_percent: null, late_percent: null,
    median_error_seconds: null, p25_error_seconds: null, p75_error_seconds: null, iqr_error_seconds: null,
    minute_bins: 0, complete_minute_bins: 0, completeness_percent: null, wobble_pairs: 0, median_wobble_seconds: null,
  });
  const get = (r: Keyed) => {
    const k = keyOf(r);
    return figures.get(k) ?? figures.set(k, blank()).get(k)!;
  };
  const pct = (a: number, n: number) => (n === 0 ? null : Math.round((a / n) * 1000) / 10);
  const s1 = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);
  for (const r of rows) {
    const f = get(r);
    if (r.kind === 'e') {
      f.predictions = r.n;
      f.accurate = r.accurate;
      f.accuracy_percent = pct(r.accurate, r.n);
      f.early_percent = pct(r.early, r.n);
      f.on_time_percent = pct(r.n - r.early - r.late, r.n);
      f.late_percent = pct(r.late, r.n);
      f.median_error_seconds = s1(r.p50);
      f.p25_error_seconds = s1(r.p25);
      f.p75_error_seconds = s1(r.p75);
      f.iqr_error_seconds = r.p25 === null || r.p75 === null ? null : s1(r.p75 - r.p25);
    } else if (r.kind === 'w') {
      f.wobble_pairs = r.n;
      f.median_wobble_seconds = s1(r.p50);
    } else if (r.kind === 'b') f.minute_bins = r.n;
    else f.complete_minute_bins = r.n;
  }
  for (const f of figures.values()) f.completeness_percent = pct(f.complete_minute_bins, f.minute_bins);
  const withBands = (prefix: string) => ({
    ...(figures.get(`${prefix}|`) ?? blank()),
    by_horizon: HORIZON_BANDS.map(([lo, hi]) => ({ from_minutes: lo, to_minutes: hi, ...(figures.get(`${prefix}|${lo}`) ?? blank()) })),
  });
  const keyed: Keyed[] = rows.filter((r) => r.kind === 'b');
  const days = [...new Set(keyed.filter((r) => r.gd === 0).map((r) => r.service_date!))].sort();
  const routes = [...new Set(keyed.filter((r) => r.gd === 1 && r.gr === 0).map((r) => r.route_id!))].sort();
  return {
    start_date: p.start,
    end_date: p.end,
    total: withBands('t'),
    by_day: days.map((d) => ({ service_date: d, ...withBands(`d${d}`) })),
    by_route: routes.map((r) => ({ route_id: r, ...withBands(`r${r}`) })),
  };
}
