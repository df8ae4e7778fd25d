/**
 * The statements of a tracking round (trips/tracking/round.ts): what was recorded of the round's
 * trips, read set-based from the device's reports (trip_events, positions, trip_runs,
 * passenger_counts) and the duties of their devices, read-only (a read model, listed in
 * test/platform/owners.test.ts); and the one statement writing the round's results into
 * trip_tracking and trip_tracking_stops and clearing the dirty marks it read.
 */
import type { Db } from '../../../platform/db/index.js';
import type { CountRow, DutyRow, EventRow, PositionRow, RunRow, StopResult, TripResult } from '../tracking/compute.js';
import type { Mark, TripKey } from '../tracking/round.js';

/** A report row of a trip, with its identity (device_id and client_id: merges with reports held, tracking/round.ts). */
type Keyed<R> = R & { service_date: string; trip_id: string; client_id: string };

/**
 * The reports of these trips of a group, each trip's at or after its `from`, all in [from, until)
 * (so PostgreSQL reads only the partitions that can hold them), one statement each, ordered by
 * trip and time.
 */
export async function selectRecorded(db: Db, groupId: string, trips: readonly { service_date: string; trip_id: string; from: Date }[], from: Date, until: Date) {
  const params = [groupId, trips.map((t) => t.service_date), trips.map((t) => t.trip_id), trips.map((t) => t.from), from, until];
  // Each report table as `r`, joined to the trips (their date, id and bound) as `k`.
  const bound = 'r.group_id = $1 AND r.service_date = k.d AND r.trip_id = k.t AND r.trip_id IS NOT NULL AND r.at >= k.f WHERE r.at >= $5 AND r.at < $6';
  const [events, positions, runs, counts] = await Promise.all([
    db.query<Keyed<EventRow>>(
      `SELECT r.service_date, r.trip_id, r.device_id, r.client_id, r.at, r.event, r.stop_id, r.stop_sequence, r.start_time, r.lat, r.lon, r.gps_valid
       FROM unnest($2::date[], $3::text[], $4::timestamptz[]) AS k(d, t, f) JOIN trip_events r ON ${bound} ORDER BY r.service_date, r.trip_id, r.at, r.client_id`, params),
    db.query<Keyed<PositionRow>>(
      `SELECT r.service_date, r.trip_id, r.device_id, r.client_id, r.at, r.lat, r.lon, r.gps_valid, r.start_time
       FROM unnest($2::date[], $3::text[], $4::timestamptz[]) AS k(d, t, f) JOIN positions r ON ${bound} ORDER BY r.service_date, r.trip_id, r.at, r.client_id`, params),
    db.query<Keyed<RunRow>>(
      `SELECT r.service_date, r.trip_id, r.device_id, r.client_id, r.kind, r.at, r.start_time
       FROM unnest($2::date[], $3::text[], $4::timestamptz[]) AS k(d, t, f) JOIN trip_runs r ON ${bound} ORDER BY r.service_date, r.trip_id, r.at`, params),
    db.query<Keyed<CountRow>>(
      `SELECT r.service_date, r.trip_id, r.device_id, r.client_id, r.at, r.stop_id, r.stop_sequence, r.door, SUM(r.boardings)::int AS boardings, SUM(r.alightings)::int AS alightings
       FROM unnest($2::date[], $3::text[], $4::timestamptz[]) AS k(d, t, f) JOIN passenger_counts r ON ${bound}
       GROUP BY r.service_date, r.trip_id, r.device_id, r.client_id, r.at, r.stop_id, r.stop_sequence, r.door ORDER BY r.service_date, r.trip_id, r.at`, params),
  ]);
  return { events, positions, runs, counts };
}

/** The duties of these devices that overlap [first, last], by sign-on. */
export function selectDutiesOfDevices(db: Db, groupId: string, devices: string[], first: Date, last: Date): Promise<DutyRow[]> {
  return db.query<DutyRow>(
    `SELECT device_id, driver_id, vehicle_id, signed_on_at, signed_off_at FROM duties
     WHERE group_id = $1 AND device_id = ANY($2) AND signed_on_at <= $4 AND (signed_off_at IS NULL OR signed_off_at > $3)
     ORDER BY signed_on_at`,
    [groupId, devices, first, last],
  );
}

/** A PostgreSQL array literal of texts (each element quoted), for text[] columns passed through unnest. */
function textArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;
}

/** The order of texts every round locks the tracking's rows in (UTF-16 code units; bytes for the Basic Multilingual Plane). */
export const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const intArray = (values: readonly number[]) => `{${values.join(',')}}`;

/**
 * The columns of a stop row the round writes (trip_tracking_stops, after the key), as the values it
 * sends ($4… of the upsert, in this order). int[][] does not travel through unnest as rows: each
 * row's door lists go as array literals (stopValues).
 */
const STOP_COLUMNS: readonly ((r: StopResult) => unknown)[] = [
  (r) => r.s.stop_sequence, (r) => r.s.stop_id, (r) => r.s.stop_name, (r) => r.s.stop_lat, (r) => r.s.stop_lon,
  (r) => r.s.arrival_at, (r) => r.s.departure_at, (r) => r.p?.at ?? null, (r) => r.p?.source ?? null,
  (r) => r.delay, (r) => r.p?.lat ?? null, (r) => r.p?.lon ?? null, (r) => r.p?.gps_valid ?? null,
  (r) => r.p?.device_id ?? null, (r) => r.vehicle, (r) => r.driver,
  (r) => r.in, (r) => r.out,
  (r) => r.arrival, (r) => r.departure,
];

/** The values sent: the door lists as array literals. */
const stopValues = (r: StopResult) => STOP_COLUMNS.map((f) => {
  const v = f(r);
  return Array.isArray(v) ? intArray(v as number[]) : v;
});

/** Whether two values store the same: instants by their time, door lists element by element (no string made: a round compares thousands). */
function same(x: unknown, y: unknown): boolean {
  if (x instanceof Date && y instanceof Date) return x.getTime() === y.getTime();
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => v === y[i]);
  return x === y;
}

/** Whether two stop rows store the same: the values the round writes. */
export function sameStop(a: StopResult, b: StopResult): boolean {
  return STOP_COLUMNS.every((f) => same(f(a), f(b)));
}

/** A statement and its parameters, and the name another part reads its RETURNING by (else w<n>). */
type Part = [text: string, params: unknown[], name?: string];

/**
 * Statements as one: each a data-modifying WITH query of the next (their $n renumbered), so they
 * commit together in one round trip instead of BEGIN, each statement and COMMIT (seven waits for
 * the connection and the event loop under load). They see one snapshot, and the rows each touches
 * are disjoint from the others', so their order does not change the result. (PostgreSQL runs WITH
 * queries nobody reads at the end of the statement, in the order written; its documentation leaves
 * that order open, and it only matters for the order two instances' rounds lock rows in.)
 */
function together(parts: readonly Part[], last: string): [text: string, params: unknown[]] {
  const params: unknown[] = [];
  const ctes = parts.map(([text, p, name], i) => {
    const offset = params.length;
    params.push(...p);
    return `${name ?? `w${i}`} AS (${text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)})`;
  });
  return [`WITH ${ctes.join(',\n')}\n${last}`, params];
}

/**
 * The round's results in one statement (see together): the stop rows no longer scheduled deleted, the trips
 * with nothing recorded deleted, every stop row and trip row upserted (one statement each, arrays
 * through unnest; a stop row that did not change is not rewritten), and `marks` cleared unless a
 * newer report marked the trip again meanwhile. Each trip's upsert draws its `written` (migration
 * 0022), which the stop rows inserted or changed take: its stop rows are upserted from the trips'
 * (they read its RETURNING), so a trip's row is locked before its stop rows, in every round alike.
 * Returns the computed_at written.
 */
export async function writeRound(
  db: Db, results: readonly { key: TripKey; result: TripResult | null; changed?: readonly StopResult[] }[], marks: readonly Mark[],
): Promise<string | null> {
  if (results.length === 0 && marks.length === 0) return null;
  // One order for every writer (rows are locked in it): two instances' rounds never deadlock.
  const order = (a: TripKey, b: TripKey) => cmp(a.group_id, b.group_id) || cmp(a.service_date, b.service_date) || cmp(a.trip_id, b.trip_id);
  results = [...results].sort((a, b) => order(a.key, b.key));
  const stopped = results.filter((r) => r.result !== null) as { key: TripKey; result: TripResult; changed?: readonly StopResult[] }[];
  // Of each trip, the stop rows that may differ from those stored (`changed`, when the caller knows them).
  const stops = stopped.flatMap(({ key, result, changed }) => (changed ?? result.stops).map((s) => ({ key, r: s })));
  const col = <T, V>(rows: readonly T[], f: (r: T) => V) => rows.map(f);
  const parts: Part[] = [];
  if (results.length > 0) {
    // Stop rows of the round's trips that are no longer scheduled (or whose trip has nothing recorded).
    // (Each trip with the list of its stop_sequences kept: a join on the key, then a short array test per row.)
    parts.push([
      `DELETE FROM trip_tracking_stops s USING unnest($1::text[], $2::date[], $3::text[], $4::text[]) AS k(g, d, t, kept)
       WHERE s.group_id = k.g AND s.service_date = k.d AND s.trip_id = k.t AND NOT (s.stop_sequence = ANY(k.kept::int[]))`,
      [col(results, (r) => r.key.group_id), col(results, (r) => r.key.service_date), col(results, (r) => r.key.trip_id),
        col(results, (r) => intArray(r.result?.stops.map((x) => x.s.stop_sequence) ?? []))]]);
    const gone = results.filter((r) => r.result === null);
    if (gone.length > 0) {
      parts.push([
        `DELETE FROM trip_tracking t USING unnest($1::text[], $2::date[], $3::text[]) AS k(g, d, t)
         WHERE t.group_id = k.g AND t.service_date = k.d AND t.trip_id = k.t`,
        [col(gone, (r) => r.key.group_id), col(gone, (r) => r.key.service_date), col(gone, (r) => r.key.trip_id)]]);
    }
  }
  // The trips' upsert comes first: their stop rows take the `written` it draws (migration 0022).
  if (stopped.length > 0) {
    const t = stopped;
    parts.push([
      `INSERT INTO trip_tracking (group_id, service_date, trip_id, route_id, start_time, gtfs_id, scheduled_start_at, scheduled_end_at, started_at, ended_at, end_reported,
         last_report_at, delay_seconds, delay_stop_sequence, planned_stops, recorded_stops, unpassed_stops, last_passed_sequence, tk, vk, recorded_commercial_km,
         off_itinerary_km, reliable_km, unreliable_km, percent_km, positions, invalid_positions, boardings, alightings, max_load, device_ids, vehicle_ids, driver_ids,
         direction_id, block_id, headsign, first_stop_id, last_stop_id, last_sequence, doors, computed_at, written)
       SELECT u.g, u.d, u.t, u.route_id, u.start_time, u.gtfs_id, u.ssa, u.sea, u.started_at, u.ended_at, u.end_reported, u.last_report_at, u.delay_seconds, u.delay_stop_sequence,
              u.planned_stops, u.recorded_stops, u.unpassed::int[], u.last_passed_sequence, u.tk, u.vk, u.rck, u.oik, u.rk, u.uk, u.pk, u.positions, u.invalid_positions,
              u.boardings, u.alightings, u.max_load, u.dev::text[], u.veh::text[], u.drv::text[], u.direction_id, u.block_id, u.headsign, u.first_stop_id, u.last_stop_id,
              u.last_sequence, u.doors, now(), nextval('trip_tracking_written')
       FROM unnest($1::text[], $2::date[], $3::text[], $4::text[], $5::int[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::bool[],
         $12::timestamptz[], $13::int[], $14::int[], $15::int[], $16::int[], $17::text[], $18::int[], $19::float8[], $20::float8[], $21::float8[], $22::float8[], $23::float8[],
         $24::float8[], $25::float8[], $26::int[], $27::int[], $28::int[], $29::int[], $30::int[], $31::text[], $32::text[], $33::text[], $34::int[], $35::text[], $36::text[],
         $37::text[], $38::text[], $39::int[], $40::int[])
         AS u(g, d, t, route_id, start_time, gtfs_id, ssa, sea, started_at, ended_at, end_reported, last_report_at, delay_seconds, delay_stop_sequence, planned_stops,
              recorded_stops, unpassed, last_passed_sequence, tk, vk, rck, oik, rk, uk, pk, positions, invalid_positions, boardings, alightings, max_load, dev, veh, drv,
              direction_id, block_id, headsign, first_stop_id, last_stop_id, last_sequence, doors)
       ON CONFLICT (group_id, service_date, trip_id) DO UPDATE SET
         route_id = EXCLUDED.route_id, start_time = EXCLUDED.start_time, gtfs_id = EXCLUDED.gtfs_id, scheduled_start_at = EXCLUDED.scheduled_start_at,
         scheduled_end_at = EXCLUDED.scheduled_end_at, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at, end_reported = EXCLUDED.end_reported,
         last_report_at = EXCLUDED.last_report_at, delay_seconds = EXCLUDED.delay_seconds, delay_stop_sequence = EXCLUDED.delay_stop_sequence,
         planned_stops = EXCLUDED.planned_stops, recorded_stops = EXCLUDED.recorded_stops, unpassed_stops = EXCLUDED.unpassed_stops,
         last_passed_sequence = EXCLUDED.last_passed_sequence, tk = EXCLUDED.tk, vk = EXCLUDED.vk, recorded_commercial_km = EXCLUDED.recorded_commercial_km,
         off_itinerary_km = EXCLUDED.off_itinerary_km, reliable_km = EXCLUDED.reliable_km, unreliable_km = EXCLUDED.unreliable_km, percent_km = EXCLUDED.percent_km,
         positions = EXCLUDED.positions, invalid_positions = EXCLUDED.invalid_positions, boardings = EXCLUDED.boardings, alightings = EXCLUDED.alightings,
         max_load = EXCLUDED.max_load, device_ids = EXCLUDED.device_ids, vehicle_ids = EXCLUDED.vehicle_ids, driver_ids = EXCLUDED.driver_ids,
         direction_id = EXCLUDED.direction_id, block_id = EXCLUDED.block_id, headsign = EXCLUDED.headsign, first_stop_id = EXCLUDED.first_stop_id,
         last_stop_id = EXCLUDED.last_stop_id, last_sequence = EXCLUDED.last_sequence, doors = EXCLUDED.doors, computed_at = now(),
         -- Drawn under the trip row's lock (taken before SET is evaluated): a later write, a greater value.
         written = nextval('trip_tracking_written')
       RETURNING group_id, service_date, trip_id, written`,
      [
        col(t, (x) => x.key.group_id), col(t, (x) => x.key.service_date), col(t, (x) => x.key.trip_id),
        col(t, (x) => x.result.route_id), col(t, (x) => x.result.start_time), col(t, (x) => x.result.gtfs_id), col(t, (x) => x.result.scheduled_start_at),
        col(t, (x) => x.result.scheduled_end_at), col(t, (x) => x.result.started_at), col(t, (x) => x.result.ended_at), col(t, (x) => x.result.end_reported),
        col(t, (x) => x.result.last_report_at), col(t, (x) => x.result.delay_seconds), col(t, (x) => x.result.delay_stop_sequence),
        col(t, (x) => x.result.planned_stops), col(t, (x) => x.result.recorded_stops), col(t, (x) => intArray(x.result.unpassed_stops)),
        col(t, (x) => x.result.last_passed_sequence), col(t, (x) => x.result.km.tk), col(t, (x) => x.result.km.vk), col(t, (x) => x.result.km.recorded_commercial_km),
        col(t, (x) => x.result.km.off_itinerary_km), col(t, (x) => x.result.km.reliable_km), col(t, (x) => x.result.km.unreliable_km), col(t, (x) => x.result.km.percent_km),
        col(t, (x) => x.result.positions), col(t, (x) => x.result.invalid_positions), col(t, (x) => x.result.boardings), col(t, (x) => x.result.alightings),
        col(t, (x) => x.result.max_load), col(t, (x) => textArray(x.result.device_ids)), col(t, (x) => textArray(x.result.vehicle_ids)), col(t, (x) => textArray(x.result.driver_ids)),
        col(t, (x) => x.result.direction_id), col(t, (x) => x.result.block_id), col(t, (x) => x.result.headsign), col(t, (x) => x.result.first_stop_id),
        col(t, (x) => x.result.last_stop_id), col(t, (x) => x.result.last_sequence), col(t, (x) => x.result.doors),
      ],
      'written_trips',
    ]);
  }
  if (stops.length > 0) {
    const values = stops.map((x) => stopValues(x.r));
    parts.push([
      `INSERT INTO trip_tracking_stops AS o (group_id, service_date, trip_id, stop_sequence, stop_id, stop_name, stop_lat, stop_lon, scheduled_arrival_at, scheduled_departure_at,
         actual_at, source, delay_seconds, lat, lon, gps_valid, device_id, vehicle_id, driver_id, doors_in, doors_out, actual_arrival_at, actual_departure_at, written)
       SELECT u.g, u.d, u.t, u.stop_sequence, u.stop_id, u.stop_name, u.stop_lat, u.stop_lon, u.sa, u.sd, u.actual_at, u.source, u.delay_seconds, u.lat, u.lon, u.gps_valid,
              u.device_id, u.vehicle_id, u.driver_id, u.di::int[], u.dout::int[], u.aa, u.ad, v.written
       FROM unnest($1::text[], $2::date[], $3::text[], $4::int[], $5::text[], $6::text[], $7::float8[], $8::float8[], $9::timestamptz[], $10::timestamptz[], $11::timestamptz[], $12::text[],
         $13::int[], $14::float8[], $15::float8[], $16::bool[], $17::text[], $18::text[], $19::text[], $20::text[], $21::text[], $22::timestamptz[], $23::timestamptz[])
         AS u(g, d, t, stop_sequence, stop_id, stop_name, stop_lat, stop_lon, sa, sd, actual_at, source, delay_seconds, lat, lon, gps_valid, device_id, vehicle_id, driver_id, di, dout, aa, ad)
         JOIN written_trips v ON v.group_id = u.g AND v.service_date = u.d AND v.trip_id = u.t
       ON CONFLICT (group_id, service_date, trip_id, stop_sequence) DO UPDATE SET
         stop_id = EXCLUDED.stop_id, stop_name = EXCLUDED.stop_name, stop_lat = EXCLUDED.stop_lat, stop_lon = EXCLUDED.stop_lon,
         scheduled_arrival_at = EXCLUDED.scheduled_arrival_at, scheduled_departure_at = EXCLUDED.scheduled_departure_at, actual_at = EXCLUDED.actual_at,
         source = EXCLUDED.source, delay_seconds = EXCLUDED.delay_seconds, lat = EXCLUDED.lat, lon = EXCLUDED.lon, gps_valid = EXCLUDED.gps_valid,
         device_id = EXCLUDED.device_id, vehicle_id = EXCLUDED.vehicle_id, driver_id = EXCLUDED.driver_id, doors_in = EXCLUDED.doors_in, doors_out = EXCLUDED.doors_out,
         actual_arrival_at = EXCLUDED.actual_arrival_at, actual_departure_at = EXCLUDED.actual_departure_at, written = EXCLUDED.written
       WHERE (o.stop_id, o.stop_name, o.stop_lat, o.stop_lon, o.scheduled_arrival_at, o.scheduled_departure_at, o.actual_at, o.source, o.delay_seconds, o.lat, o.lon,
              o.gps_valid, o.device_id, o.vehicle_id, o.driver_id, o.doors_in, o.doors_out, o.actual_arrival_at, o.actual_departure_at)
         IS DISTINCT FROM (EXCLUDED.stop_id, EXCLUDED.stop_name, EXCLUDED.stop_lat, EXCLUDED.stop_lon, EXCLUDED.scheduled_arrival_at, EXCLUDED.scheduled_departure_at,
              EXCLUDED.actual_at, EXCLUDED.source, EXCLUDED.delay_seconds, EXCLUDED.lat, EXCLUDED.lon, EXCLUDED.gps_valid, EXCLUDED.device_id, EXCLUDED.vehicle_id,
              EXCLUDED.driver_id, EXCLUDED.doors_in, EXCLUDED.doors_out, EXCLUDED.actual_arrival_at, EXCLUDED.actual_departure_at)`,
      [
        col(stops, (x) => x.key.group_id), col(stops, (x) => x.key.service_date), col(stops, (x) => x.key.trip_id),
        ...STOP_COLUMNS.map((_, i) => values.map((v) => v[i])),
      ],
    ]);
  }
  if (marks.length > 0) {
    // A mark that ingest holds locked is being made newer: it stays (SKIP LOCKED), and the round
    // never waits for an ingest transaction (which waits for this one's marks: no deadlock).
    parts.push([
      `DELETE FROM trip_tracking_dirty WHERE ctid IN (
         SELECT d.ctid FROM trip_tracking_dirty d JOIN unnest($1::text[], $2::date[], $3::text[], $4::timestamptz[]) AS m(g, s, t, at)
           ON d.group_id = m.g AND d.service_date = m.s AND d.trip_id = m.t AND d.marked_at <= m.at
         ORDER BY d.group_id, d.service_date, d.trip_id FOR UPDATE OF d SKIP LOCKED)`,
      [col(marks, (m) => m.group_id), col(marks, (m) => m.service_date), col(marks, (m) => m.trip_id), col(marks, (m) => m.marked_at)]]);
  }
  // now(): the transaction's start, the computed_at written (as text, like the marks' reads of it).
  const [row] = await db.query<{ computed_at: string }>(...together(parts, 'SELECT now()::text AS computed_at'));
  return row!.computed_at;
}
