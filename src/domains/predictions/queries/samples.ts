/**
 * The samples of published predictions (prediction_sample_sets, a row per trip and minute; the view
 * prediction_samples, a row per stop: migration 0021) and their scoring against the actual
 * arrivals of the tracking tables (trip_tracking, trip_tracking_stops), a trip seen through its
 * vehicles' and drivers' teams (vehicles, drivers), read-only (docs/architecture.md).
 */
import type { Queryable } from '../../../platform/db/index.js';

/** The window scored before each actual arrival, in minutes (Cal-ITP: 30). */
export const WINDOW_MINUTES = 30;
/** The horizon bands, minutes to the actual arrival: [from, to). */
export const HORIZON_BANDS = [[0, 5], [5, 10], [10, 20], [20, 30]] as const;

/**
 * The samples of one group and date, column by column (same length each), a trip's stops
 * consecutive and never split between two statements: `arr`/`dep` the predicted times in
 * milliseconds from the sampling time.
 */
export interface SampleColumns {
  trip: string[]; seq: number[]; stop: string[]; route: string[]; arr: number[]; dep: number[]; unc: number[]; basis: string[];
}

/** The groups (all, or `groupId`) and service dates with a trip in progress at `now`, by group and date. */
export function selectSampleCandidates(db: Queryable, now: Date, groupId: string | null): Promise<{ group_id: string; service_date: string }[]> {
  // A trip in progress was started within the last hours (a trip is over an hour after its end at the latest). Per
  // group, through the key of trip_tracking (group_id, service_date): the last few dates of each group are read, never the history.
  return db.query<{ group_id: string; service_date: string }>(
    `SELECT g.group_id, d.service_date FROM groups g
     CROSS JOIN LATERAL (
       SELECT DISTINCT t.service_date::text AS service_date FROM trip_tracking t
       WHERE t.group_id = g.group_id
         AND t.service_date BETWEEN ($1::timestamptz AT TIME ZONE 'UTC')::date - 2 AND ($1::timestamptz AT TIME ZONE 'UTC')::date + 1
         AND NOT t.end_reported AND COALESCE(t.last_report_at, t.started_at) >= $1::timestamptz - interval '12 hours') d
     WHERE $2::text IS NULL OR g.group_id = $2
     ORDER BY 1, 2`,
    [now, groupId],
  );
}

/**
 * Records the samples of a group and date taken at `now`, a row per trip (prediction_sample_sets,
 * migration 0021), at most one a trip and clock minute; returns the samples (stops) recorded.
 */
export async function insertSamples(db: Queryable, groupId: string, date: string, now: Date, cols: SampleColumns): Promise<number> {
  const rows = await db.query<{ n: number }>(
      `WITH ins AS (
         INSERT INTO prediction_sample_sets (group_id, service_date, trip_id, sampled_minute, route_id, sampled_at,
           stop_sequences, stop_ids, arrivals_ms, departures_ms, uncertainties_s, bases)
         SELECT $1, $2::date, u.trip_id, date_trunc('minute', $3::timestamptz), min(u.route_id), $3::timestamptz,
           array_agg(u.seq ORDER BY u.i), array_agg(u.stop_id ORDER BY u.i), array_agg(u.arr ORDER BY u.i), array_agg(u.dep ORDER BY u.i),
           array_agg(u.unc ORDER BY u.i), array_agg(u.basis ORDER BY u.i)
         FROM unnest($4::text[], $5::int[], $6::text[], $7::text[], $8::int[], $9::int[], $10::int[], $11::text[]) WITH ORDINALITY
           AS u(trip_id, seq, stop_id, route_id, arr, dep, unc, basis, i)
         GROUP BY u.trip_id
         ON CONFLICT DO NOTHING RETURNING cardinality(stop_sequences) AS n)
       SELECT COALESCE(sum(n), 0)::int AS n FROM ins`,
      [groupId, date, now, cols.trip, cols.seq, cols.stop, cols.route, cols.arr, cols.dep, cols.unc, cols.basis],
  );
  return rows[0]!.n;
}

/** Deletes the samples of service dates more than retentionDays before now; returns how many. */
export async function deleteSamplesBefore(db: Queryable, now: Date, retentionDays: number): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `WITH d AS (DELETE FROM prediction_sample_sets WHERE service_date < ($1::timestamptz AT TIME ZONE 'UTC')::date - $2::int RETURNING cardinality(stop_sequences) AS n)
     SELECT COALESCE(sum(n), 0)::int AS n FROM d`,
    [now, retentionDays],
  );
  return rows[0]!.n;
}

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

/** A row of the scoring, keyed by its grouping set: service_date/route_id null where aggregated (gd/gr = 1). */
export type ScoreKeyed = { gd: number; gr: number; service_date: string | null; route_id: string | null; band: number | null };
export type ScoreRow = ScoreKeyed & { kind: 'e' | 'w' | 'b' | 'c'; n: number; accurate: number; early: number; late: number; p25: number | null; p50: number | null; p75: number | null };

/** The scored samples of the group from `start` to `end` (teams: null for all), in total, by day and by route, each also by horizon band. */
export function selectScores(db: Queryable, groupId: string, start: string, end: string, teams: string[] | null): Promise<ScoreRow[]> {
  const params = [groupId, start, end, teams];
  // One statement, the scored samples read once: kind e (errors), w (wobble), b (bins expected), c (bins complete).
  return db.query<ScoreRow>(
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
}
