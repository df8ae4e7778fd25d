/**
 * The stored trip tracking (trip_tracking, trip_tracking_stops) and its dirty queue
 * (trip_tracking_dirty): the reads of tracking.ts, delays.ts and the predictions (docs/architecture.md).
 */
import type { Queryable, Tx } from '../../../platform/db/index.js';
import type { Kilometres } from '../passages.js';
import type { TripResult } from '../tracking/compute.js';
import type { Mark } from '../tracking/round.js';

/** A stored trip summary row: its kilometres are the columns of the same names. */
export type SummaryRow = { trip_id: string } & Kilometres &
  Pick<
    TripResult,
    | 'route_id' | 'start_time' | 'scheduled_end_at' | 'started_at' | 'ended_at' | 'end_reported' | 'delay_seconds' | 'delay_stop_sequence'
    | 'planned_stops' | 'recorded_stops' | 'unpassed_stops' | 'last_passed_sequence' | 'boardings' | 'alightings' | 'max_load'
    | 'device_ids' | 'vehicle_ids' | 'driver_ids'
  > & {
    /** The trip's last write (migration 0022): its stop rows changed since a read that saw w are those with `written` > w. */
    written: number;
  };

export interface StopRow {
  trip_id: string;
  stop_sequence: number;
  stop_id: string;
  stop_name: string | null;
  scheduled_arrival_at: Date | null;
  scheduled_departure_at: Date | null;
  actual_at: Date | null;
  source: 'event' | 'position' | null;
  actual_arrival_at: Date | null;
  actual_departure_at: Date | null;
  delay_seconds: number | null;
  vehicle_id: string | null;
  doors_in: number[];
  doors_out: number[];
}

/** The delay of a trip at its last stop passed, as stored (start_time in seconds). */
export interface DelayRow {
  service_date: string;
  trip_id: string;
  start_time: number | null;
  delay_seconds: number;
  stop_sequence: number;
  stop_id: string;
  passed_at: Date;
}

/**
 * The statement that marks trips of a group ($1) for recomputation, with the database's clock (a
 * mark already there only moves forward): `source` is a query of (service_date, trip_id, at) rows,
 * repeats allowed, `at` the instant of a report stored for the trip (NULL when the mark stands for
 * no report: everything is read again). The mark's `since` is the earliest of them, and a mark
 * made again keeps the least (NULL wins): a round holding the trip's reports reads only those at or
 * after it (tracking/round.ts). Marked in one order (bytes of the texts, COLLATE "C"), so two
 * batches that mark the same trips never deadlock (a round deletes marks SKIP LOCKED: round.ts).
 * Device ingest runs it as a WITH query of the statement that stores the reports
 * (device/queries/reports.ts): a stored report always leaves its trip marked, in the same commit.
 */
export const markTrips = (source: string) => `INSERT INTO trip_tracking_dirty AS d (group_id, service_date, trip_id, marked_at, since)
  SELECT $1, t.service_date, t.trip_id, clock_timestamp(), t.since
  FROM (SELECT s.service_date, s.trip_id, CASE WHEN bool_and(s.at IS NOT NULL) THEN min(s.at) END AS since FROM (${source}) AS s(service_date, trip_id, at)
        WHERE s.service_date IS NOT NULL AND s.trip_id IS NOT NULL GROUP BY s.service_date, s.trip_id) AS t
  ORDER BY t.service_date, t.trip_id COLLATE "C"
  ON CONFLICT (group_id, service_date, trip_id) DO UPDATE SET marked_at = GREATEST(d.marked_at, clock_timestamp()),
    since = CASE WHEN d.since IS NULL OR EXCLUDED.since IS NULL THEN NULL ELSE LEAST(d.since, EXCLUDED.since) END`;

/** Marks these trips of a group for recomputation (markTrips: everything read again), in the caller's transaction. */
export async function markDirty(tx: Tx, groupId: string, trips: readonly { service_date: string; trip_id: string }[]): Promise<void> {
  if (trips.length === 0) return;
  await tx.query(markTrips('SELECT d, t, NULL::timestamptz FROM unnest($2::date[], $3::text[]) AS u(d, t)'), [groupId, trips.map((t) => t.service_date), trips.map((t) => t.trip_id)]);
}

/**
 * The marks of the dirty trips (of a group, dates and trips when given), oldest first, with when
 * each trip was last recomputed (trip_tracking.computed_at, read in the same snapshot): marked_at,
 * since and computed_at as text (they have microseconds, a Date only milliseconds: a mark would
 * never be cleared).
 */
export function selectDirty(db: Queryable, o: { groupId: string | null; dates: string[] | null; from: string | null; to: string | null; tripIds: string[] | null; limit: number }): Promise<Mark[]> {
  return db.query<Mark>(
    `SELECT d.group_id, d.service_date, d.trip_id, d.marked_at::text AS marked_at, d.since, t.computed_at::text AS computed_at
     FROM trip_tracking_dirty d LEFT JOIN trip_tracking t USING (group_id, service_date, trip_id)
     WHERE ($1::text IS NULL OR d.group_id = $1) AND ($2::date[] IS NULL OR d.service_date = ANY($2::date[]))
       AND ($3::date IS NULL OR d.service_date >= $3) AND ($4::date IS NULL OR d.service_date <= $4)
       AND ($5::text[] IS NULL OR d.trip_id = ANY($5::text[]))
     ORDER BY d.marked_at LIMIT $6`,
    [o.groupId, o.dates, o.from, o.to, o.tripIds, o.limit],
  );
}

/** Whether any trip is marked dirty (of any group). */
export async function anyMarked(db: Queryable): Promise<boolean> {
  const [row] = await db.query<{ marked: boolean }>('SELECT EXISTS (SELECT 1 FROM trip_tracking_dirty) AS marked');
  return row?.marked === true;
}

/** The marks these trips have now (any groups and dates), as selectDirty; a trip without one is clean. */
export function selectMarksOf(db: Queryable, keys: readonly { group_id: string; service_date: string; trip_id: string }[]): Promise<Mark[]> {
  return db.query<Mark>(
    `SELECT d.group_id, d.service_date, d.trip_id, d.marked_at::text AS marked_at, d.since, t.computed_at::text AS computed_at
     FROM unnest($1::text[], $2::date[], $3::text[]) AS k(group_id, service_date, trip_id)
     JOIN trip_tracking_dirty d USING (group_id, service_date, trip_id)
     LEFT JOIN trip_tracking t USING (group_id, service_date, trip_id)`,
    [keys.map((k) => k.group_id), keys.map((k) => k.service_date), keys.map((k) => k.trip_id)],
  );
}

/**
 * The stored summaries of the trips of a date (these trips when given), by start; `open`: only
 * those without a trip_end report whose scheduled end is unknown or at or after `endedSince`.
 */
export function selectSummaries(db: Queryable, groupId: string, serviceDate: string, tripIds: string[] | null, open: boolean, endedSince: Date): Promise<SummaryRow[]> {
  return db.query<SummaryRow>(
    `SELECT trip_id, route_id, start_time, scheduled_end_at, started_at, ended_at, end_reported, delay_seconds, delay_stop_sequence, planned_stops, recorded_stops,
            unpassed_stops, last_passed_sequence, tk, vk, recorded_commercial_km, off_itinerary_km, reliable_km, unreliable_km, percent_km, boardings, alightings,
            max_load, device_ids, vehicle_ids, driver_ids, written::float8 AS written
     FROM trip_tracking WHERE group_id = $1 AND service_date = $2 AND ($3::text[] IS NULL OR trip_id = ANY($3::text[]))
       AND (NOT $4::boolean OR (NOT end_reported AND (scheduled_end_at IS NULL OR scheduled_end_at >= $5))) ORDER BY started_at, trip_id`,
    [groupId, serviceDate, tripIds, open, endedSince],
  );
}

const STOP_COLUMNS = `trip_id, stop_sequence, stop_id, stop_name, scheduled_arrival_at, scheduled_departure_at, actual_at, source, actual_arrival_at, actual_departure_at,
  delay_seconds, vehicle_id, doors_in, doors_out`;

/**
 * The stored stops of the trips of a date (these trips when given), by trip and sequence.
 *
 * Two statements, not one filtered by `($3 IS NULL OR trip_id = ANY($3))`: a prepared statement
 * is planned for any parameters after its fifth run (PostgreSQL's generic plan), and such a
 * filter then cannot use the key. The feeds read the stops of the trips recomputed since their
 * last read (OpenTripStops) at each rebuild, so their sixth read on was a scan of the date's every
 * stop, each tested against the whole array: on a city's morning (306,663 stops, 1,500 trips
 * asked) 2.2 s of the server's CPU a read, on three processes, instead of 36 ms by the key
 * (EXPLAIN ANALYZE, 2026-12-02; bench/RESULTS.md).
 */
export function selectStops(db: Queryable, groupId: string, serviceDate: string, tripIds: string[] | null): Promise<StopRow[]> {
  if (tripIds === null) {
    return db.query<StopRow>(`SELECT ${STOP_COLUMNS} FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2 ORDER BY trip_id, stop_sequence`, [groupId, serviceDate]);
  }
  return db.query<StopRow>(
    `SELECT ${STOP_COLUMNS} FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2 AND trip_id = ANY($3::text[]) ORDER BY trip_id, stop_sequence`,
    [groupId, serviceDate, tripIds],
  );
}

/**
 * The stop rows of these trips of a date written after the write of each given (`since`, by
 * trip: migration 0022), by trip and sequence: what changed of them since a read of the trips that
 * saw those writes. By the key, trip by trip (a join to the list, whatever the plan's parameters).
 */
export function selectStopsWritten(db: Queryable, groupId: string, serviceDate: string, trips: readonly { trip_id: string; written: number }[]): Promise<StopRow[]> {
  return db.query<StopRow>(
    `SELECT ${STOP_COLUMNS} FROM unnest($3::text[], $4::bigint[]) AS k(t, w)
     JOIN trip_tracking_stops s ON s.group_id = $1 AND s.service_date = $2 AND s.trip_id = k.t AND s.written > k.w
     ORDER BY s.trip_id, s.stop_sequence`,
    [groupId, serviceDate, trips.map((t) => t.trip_id), trips.map((t) => t.written)],
  );
}

/** Which of these trips have something recorded on the date. */
export async function selectRecordedTripIds(db: Queryable, groupId: string, serviceDate: string, tripIds: string[]): Promise<string[]> {
  return (await db.query<{ trip_id: string }>(
    'SELECT trip_id FROM trip_tracking WHERE group_id = $1 AND service_date = $2 AND trip_id = ANY($3::text[])',
    [groupId, serviceDate, tripIds],
  )).map((r) => r.trip_id);
}

/**
 * The delay of each trip of `dates` that has one, with the stop it was measured at, whose scheduled
 * end plus its delay is at or after `endedSince` (or has no scheduled end). Each trip's stop is
 * found by its key (LATERAL … LIMIT 1: not flattened into a join): as a join, the planner scanned
 * the dates' every tracked stop, in parallel, at each feeds rebuild, growing through the day
 * (a city's morning, 289,000 stops: 67–70 ms on three processes, against 39–42 ms on one so,
 * which the day's stops do not grow; EXPLAIN ANALYZE, 2026-11-29).
 */
export function selectDelays(db: Queryable, groupId: string, dates: string[], endedSince: Date): Promise<DelayRow[]> {
  return db.query<DelayRow>(
    `SELECT to_char(tt.service_date, 'YYYY-MM-DD') AS service_date, tt.trip_id, tt.start_time, tt.delay_seconds, s.stop_sequence, s.stop_id, s.actual_at AS passed_at
     FROM trip_tracking tt
     CROSS JOIN LATERAL (
       SELECT s.stop_sequence, s.stop_id, s.actual_at FROM trip_tracking_stops s
       WHERE s.group_id = tt.group_id AND s.service_date = tt.service_date AND s.trip_id = tt.trip_id AND s.stop_sequence = tt.delay_stop_sequence AND s.actual_at IS NOT NULL
       LIMIT 1) s
     WHERE tt.group_id = $1 AND tt.service_date = ANY($2::date[]) AND tt.delay_seconds IS NOT NULL
       AND (tt.scheduled_end_at IS NULL OR tt.scheduled_end_at + GREATEST(tt.delay_seconds, 0) * interval '1 second' >= $3)`,
    [groupId, dates, endedSince],
  );
}
