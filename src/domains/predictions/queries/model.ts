/**
 * The predictions' model tables (prediction_segments, prediction_models): built set-based from
 * the stored tracking (trip_tracking, trip_tracking_stops) and the GTFS calendars (day types),
 * read-only (docs/architecture.md).
 */
import type { Queryable, Tx } from '../../../platform/db/index.js';
import type { DayType } from '../model.js';
import type { SegmentStats } from '../predict.js';

/**
 * The day type of a service date `d` (SQL, $1 = group_id): `sunday` for Sundays and for dates on
 * which calendar_dates.txt adds a service whose calendar runs on Sundays only (a holiday run on
 * the Sunday timetable), `saturday` likewise, else by the weekday. Any version of the group's
 * GTFS counts (a date's holiday service is the same in every version that has it).
 */
function dayTypeSql(d: string): string {
  const addedOnly = (day: 'sunday' | 'saturday') => {
    const others = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].filter((x) => x !== day);
    return `EXISTS (SELECT 1 FROM gtfs_calendar_dates cd
      JOIN gtfs_calendars c ON c.group_id = cd.group_id AND c.gtfs_id = cd.gtfs_id AND c.service_id = cd.service_id
      WHERE cd.group_id = $1 AND cd.date = ${d} AND cd.exception_type = 1 AND c.${day} AND NOT (${others.map((o) => `c.${o}`).join(' OR ')}))`;
  };
  return `CASE WHEN extract(isodow FROM ${d}) = 7 OR ${addedOnly('sunday')} THEN 'sunday'
               WHEN extract(isodow FROM ${d}) = 6 OR ${addedOnly('saturday')} THEN 'saturday'
               ELSE 'weekday' END`;
}

/** The day type of each date (distinct YYYY-MM-DD). */
export function selectDayTypes(db: Queryable, groupId: string, dates: string[]): Promise<{ d: string; day_type: DayType }[]> {
  return db.query<{ d: string; day_type: DayType }>(
    `SELECT d, ${dayTypeSql('d')} AS day_type FROM unnest($2::date[]) AS d`,
    [groupId, dates],
  );
}

/** Takes the group's build lock for the transaction; false when another build holds it. */
export async function tryBuildLock(tx: Tx, groupId: string): Promise<boolean> {
  const [lock] = await tx.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock(hashtext('transit-ops:predictions:' || $1)) AS ok", [groupId]);
  return lock?.ok === true;
}

export async function deleteSegments(tx: Tx, groupId: string): Promise<void> {
  await tx.query('DELETE FROM prediction_segments WHERE group_id = $1', [groupId]);
}

/**
 * Learns the group's segments from the tracking of the service dates from `from` to before
 * `today` (bands of `bandSeconds` from noon minus 12 h in `timezone`); answers how many runs and
 * segments. A run: two consecutive stops of a tracked trip, both passed (a missed stop breaks the pair).
 */
export async function insertLearnedSegments(tx: Tx, groupId: string, from: string, today: string, timezone: string, bandSeconds: number, now: Date): Promise<{ runs: number; segments: number }> {
  const [counts] = await tx.query<{ runs: number; segments: number }>(
      `WITH days AS (
         SELECT d::date AS service_date, ${dayTypeSql('d::date')} AS day_type
         FROM generate_series($2::date, $3::date - 1, interval '1 day') AS d
       ), legs AS (
         SELECT s.service_date, s.trip_id, s.stop_id AS from_stop_id, s.actual_at AS from_at,
                lead(s.stop_id) OVER w AS to_stop_id, lead(s.actual_at) OVER w AS to_at,
                lead(extract(epoch FROM s.actual_departure_at - s.actual_arrival_at)) OVER w AS to_dwell_s
         FROM trip_tracking_stops s
         WHERE s.group_id = $1 AND s.service_date >= $2 AND s.service_date < $3
         WINDOW w AS (PARTITION BY s.service_date, s.trip_id ORDER BY s.stop_sequence)
       ), runs AS (
         SELECT t.route_id || '|' || coalesce(t.direction_id::text, '') AS pattern_key, l.from_stop_id, l.to_stop_id, d.day_type,
                floor(extract(epoch FROM l.from_at - (((l.service_date + time '12:00') AT TIME ZONE $4::text) - interval '12 hours')) / $5::integer)::integer AS time_band,
                extract(epoch FROM l.to_at - l.from_at) AS run_s, l.to_dwell_s
         FROM legs l
         JOIN days d ON d.service_date = l.service_date
         JOIN trip_tracking t ON t.group_id = $1 AND t.service_date = l.service_date AND t.trip_id = l.trip_id
         WHERE l.from_at IS NOT NULL AND l.to_at IS NOT NULL AND l.to_at >= l.from_at AND l.to_at < l.from_at + interval '3 hours'
           AND t.route_id IS NOT NULL
       ), cells AS (
         -- One sort of the running times per cell for the three quantiles.
         SELECT pattern_key, from_stop_id, to_stop_id, day_type, time_band, count(*) AS n,
                percentile_cont(ARRAY[0.1, 0.5, 0.9]::double precision[]) WITHIN GROUP (ORDER BY run_s) AS q,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY to_dwell_s) AS dwell
         FROM runs GROUP BY pattern_key, from_stop_id, to_stop_id, day_type, time_band
       ), learned AS (
         INSERT INTO prediction_segments (group_id, pattern_key, from_stop_id, to_stop_id, day_type, time_band, n, median_run_s, p10_run_s, p90_run_s, median_dwell_s, updated_at)
         SELECT $1, pattern_key, from_stop_id, to_stop_id, day_type, time_band, n, q[2], q[1], q[3], dwell, $6::timestamptz FROM cells
         RETURNING n
       )
       SELECT coalesce(sum(n), 0)::integer AS runs, count(*)::integer AS segments FROM learned`,
    [groupId, from, today, timezone, bandSeconds, now],
  );
  return counts!;
}

/** Records the group's model as built. */
export async function upsertModel(tx: Tx, groupId: string, now: Date, bandSeconds: number, r: { history_from: string; history_to: string; runs: number; segments: number; took_ms: number }): Promise<void> {
  await tx.query(
      `INSERT INTO prediction_models (group_id, built_at, band_seconds, history_from, history_to, runs, segments, took_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (group_id) DO UPDATE SET built_at = EXCLUDED.built_at, band_seconds = EXCLUDED.band_seconds, history_from = EXCLUDED.history_from,
         history_to = EXCLUDED.history_to, runs = EXCLUDED.runs, segments = EXCLUDED.segments, took_ms = EXCLUDED.took_ms,
         version = nextval('prediction_model_version')`,
    [groupId, now, bandSeconds, r.history_from, r.history_to, r.runs, r.segments, r.took_ms],
  );
}

/** The build of the group's model stored (its version, migration 0023) and its band width; none: no model. */
export async function selectModelHead(db: Queryable, groupId: string): Promise<{ version: string; band_seconds: number } | undefined> {
  const rows = await db.query<{ version: string; band_seconds: number }>('SELECT version::text AS version, band_seconds FROM prediction_models WHERE group_id = $1', [groupId]);
  return rows[0];
}

/**
 * The segments of these route directions in a day type, bands `fromBand` to `toBand`, of the
 * model's build `version` (one statement). No row: that build is no longer the one stored; one
 * row of nulls: that build has no such segments.
 */
export function selectModelSegments(
  db: Queryable, groupId: string, version: string, patternKeys: string[], dayType: DayType, fromBand: number, toBand: number,
): Promise<({ pattern_key: string; from_stop_id: string; to_stop_id: string; time_band: number } & SegmentStats | { pattern_key: null })[]> {
  return db.query(
    `SELECT s.pattern_key, s.from_stop_id, s.to_stop_id, s.time_band, s.n, s.median_run_s, s.p10_run_s, s.p90_run_s, s.median_dwell_s
     FROM prediction_models m
     LEFT JOIN prediction_segments s ON s.group_id = m.group_id AND s.pattern_key = ANY($3::text[]) AND s.day_type = $4
       AND s.time_band BETWEEN $5::int AND $6::int
     WHERE m.group_id = $1 AND m.version = $2::bigint`,
    [groupId, version, patternKeys, dayType, fromBand, toBand],
  );
}

/** The groups whose model is missing or older than `maxAgeHours` and that have tracking on the last `days` days. */
export async function selectStaleGroups(db: Queryable, now: Date, maxAgeHours: number, days: number): Promise<string[]> {
  const rows = await db.query<{ group_id: string }>(
    `SELECT g.group_id FROM groups g LEFT JOIN prediction_models m ON m.group_id = g.group_id
     WHERE (m.built_at IS NULL OR m.built_at < $1::timestamptz - make_interval(hours => $2::int))
       AND EXISTS (SELECT 1 FROM trip_tracking t WHERE t.group_id = g.group_id AND t.service_date >= ($1::timestamptz)::date - $3::int)
     ORDER BY g.group_id`,
    [now, maxAgeHours, days],
  );
  return rows.map((r) => r.group_id);
}
