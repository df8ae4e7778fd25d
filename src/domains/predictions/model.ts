/**
 * The learned model of the predictions (migration 0018, docs/predictions.md): segment running
 * times and dwells from the group's own tracking history, built set-based in the database, and
 * the job that keeps it fresh.
 *
 * Like the bulk exports, the builder reads the tracking tables directly (trip_tracking_stops, one
 * pass over the history window): reading it trip by trip through trackingOf would cost a query
 * per trip and date.
 */
import type { AppContext } from '../../platform/context.js';
import type { Db, Queryable } from '../../platform/db/index.js';
import { addDays, localDate } from '../../platform/time.js';
import type { SegmentStats } from './predict.js';

export const DAY_TYPES = ['weekday', 'saturday', 'sunday'] as const;
export type DayType = (typeof DAY_TYPES)[number];

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

/** The day type of each date (YYYY-MM-DD), in one query. */
export async function dayTypesOf(db: Queryable, groupId: string, dates: readonly string[]): Promise<Map<string, DayType>> {
  const rows = await db.query<{ d: string; day_type: DayType }>(
    `SELECT d, ${dayTypeSql('d')} AS day_type FROM unnest($2::date[]) AS d`,
    [groupId, [...new Set(dates)]],
  );
  return new Map(rows.map((r) => [r.d, r.day_type]));
}

export interface ModelOptions {
  historyDays: number;
  bandSeconds: number;
}

export interface BuildResult {
  group_id: string;
  built_at: Date;
  history_from: string;
  history_to: string;
  /** Stop-to-stop runs learned from. */
  runs: number;
  segments: number;
  took_ms: number;
}

/**
 * Rebuilds a group's segments from the tracking history of the `historyDays` service dates
 * before the one of `now` (today's trips are still running): one set-based statement, the
 * group's rows replaced in its transaction, so reads and ingest never wait for it (on
 * PostgreSQL; PGlite runs one statement at a time anyway). Another build of the group in
 * progress (another instance) makes this one return null.
 */
export async function buildModel(db: Db, groupId: string, now: Date, o: ModelOptions): Promise<BuildResult | null> {
  const started = Date.now();
  const [g] = await db.query<{ timezone: string }>('SELECT timezone FROM groups WHERE group_id = $1', [groupId]);
  if (!g) return null;
  const today = localDate(now, g.timezone);
  const from = addDays(today, -o.historyDays);
  return db.transaction(async (tx) => {
    const [lock] = await tx.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock(hashtext('transit-ops:predictions:' || $1)) AS ok", [groupId]);
    if (!lock?.ok) return null;
    await tx.query('DELETE FROM prediction_segments WHERE group_id = $1', [groupId]);
    // A run: two consecutive stops of a tracked trip, both passed (a missed stop breaks the pair).
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
      [groupId, from, today, g.timezone, o.bandSeconds, now],
    );
    const result: BuildResult = { group_id: groupId, built_at: now, history_from: from, history_to: addDays(today, -1), runs: counts!.runs, segments: counts!.segments, took_ms: Date.now() - started };
    await tx.query(
      `INSERT INTO prediction_models (group_id, built_at, band_seconds, history_from, history_to, runs, segments, took_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (group_id) DO UPDATE SET built_at = EXCLUDED.built_at, band_seconds = EXCLUDED.band_seconds, history_from = EXCLUDED.history_from,
         history_to = EXCLUDED.history_to, runs = EXCLUDED.runs, segments = EXCLUDED.segments, took_ms = EXCLUDED.took_ms`,
      [groupId, now, o.bandSeconds, result.history_from, result.history_to, result.runs, result.segments, result.took_ms],
    );
    return result;
  });
}

/** What a group's model says for some route directions, in one day type and range of bands. */
export interface LoadedModel {
  bandSeconds: number;
  /** Keyed by segmentKey. */
  segments: Map<string, SegmentStats>;
}

export function segmentKey(patternKey: string, fromStopId: string, toStopId: string, band: number): string {
  return `${patternKey}\u0000${fromStopId}\u0000${toStopId}\u0000${band}`;
}

/**
 * The segments of the given route directions in a day type, bands `fromBand` to `toBand`: one
 * query. Null when the group has no model yet (then every prediction follows the schedule).
 */
export async function loadModel(db: Queryable, groupId: string, q: { patternKeys: readonly string[]; dayType: DayType; from: number; to: number }): Promise<LoadedModel | null> {
  const [m] = await db.query<{ band_seconds: number }>('SELECT band_seconds FROM prediction_models WHERE group_id = $1', [groupId]);
  if (!m) return null;
  const rows = await db.query<SegmentStats & { pattern_key: string; from_stop_id: string; to_stop_id: string; time_band: number }>(
    `SELECT pattern_key, from_stop_id, to_stop_id, time_band, n, median_run_s, p10_run_s, p90_run_s, median_dwell_s FROM prediction_segments
     WHERE group_id = $1 AND pattern_key = ANY($2::text[]) AND day_type = $3 AND time_band BETWEEN $4 AND $5`,
    [groupId, [...new Set(q.patternKeys)], q.dayType, Math.floor(q.from / m.band_seconds), Math.floor(q.to / m.band_seconds)],
  );
  const segments = new Map<string, SegmentStats>();
  for (const { pattern_key, from_stop_id, to_stop_id, time_band, ...s } of rows) segments.set(segmentKey(pattern_key, from_stop_id, to_stop_id, time_band), s);
  return { bandSeconds: m.band_seconds, segments };
}

/** The groups whose model is missing or older than `maxAgeHours` and that have tracking history to learn from. */
async function staleGroups(db: Queryable, now: Date, o: { maxAgeHours: number; historyDays: number }): Promise<string[]> {
  const rows = await db.query<{ group_id: string }>(
    `SELECT g.group_id FROM groups g LEFT JOIN prediction_models m ON m.group_id = g.group_id
     WHERE (m.built_at IS NULL OR m.built_at < $1::timestamptz - make_interval(hours => $2::int))
       AND EXISTS (SELECT 1 FROM trip_tracking t WHERE t.group_id = g.group_id AND t.service_date >= ($1::timestamptz)::date - $3::int)
     ORDER BY g.group_id`,
    [now, o.maxAgeHours, o.historyDays + 1],
  );
  return rows.map((r) => r.group_id);
}

/**
 * The model job: shortly after start, then every `checkMs`, rebuilds the models of the groups
 * whose model is missing or older than PREDICTIONS_MAX_AGE_HOURS, one group at a time. Several
 * instances may run it: the advisory lock of buildModel lets one build a group, the others skip it.
 * The function it returns stops the job and waits for the build in progress.
 */
export function startModelJob(ctx: AppContext, o: { firstMs?: number; checkMs?: number } = {}): () => Promise<void> {
  const cfg = ctx.config.predictions;
  let stopped = false;
  let busy = false;
  let running: Promise<void> = Promise.resolve();
  const round = async () => {
    for (const groupId of await staleGroups(ctx.db, ctx.clock.now(), cfg)) {
      if (stopped) return;
      const r = await buildModel(ctx.db, groupId, ctx.clock.now(), { historyDays: cfg.historyDays, bandSeconds: cfg.bandMinutes * 60 });
      if (r) ctx.log.info({ group_id: groupId, runs: r.runs, segments: r.segments, took_ms: r.took_ms }, 'prediction model built');
    }
  };
  const tick = () => {
    if (busy || stopped) return;
    busy = true;
    running = round()
      .catch((err: unknown) => ctx.log.warn({ err }, 'prediction model job failed; it retries at its next check'))
      .finally(() => (busy = false));
  };
  const first = setTimeout(tick, o.firstMs ?? 30_000);
  const timer = setInterval(tick, o.checkMs ?? 600_000);
  first.unref();
  timer.unref();
  return async () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(timer);
    await running;
  };
}
