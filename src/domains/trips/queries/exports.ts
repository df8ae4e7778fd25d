/**
 * The reads of the CSV exports over the stored tracking (exports.ts): trips from a cursor, stop
 * rows as COPY text. A trip is seen by the teams of its vehicles or drivers (vehicles, drivers,
 * read-only: docs/architecture.md).
 */
import type { Db } from '../../../platform/db/index.js';
import type { Kilometres } from '../passages.js';

/** SQL: the trip tracking row aliased `tt` is visible to the teams in $n (null = all). */
export const tripVisibleSql = (n: number) => `($${n}::text[] IS NULL
  OR EXISTS (SELECT 1 FROM vehicles ve WHERE ve.group_id = tt.group_id AND ve.vehicle_id = ANY(tt.vehicle_ids) AND ve.teams && $${n}::text[])
  OR EXISTS (SELECT 1 FROM drivers dr WHERE dr.group_id = tt.group_id AND dr.driver_id = ANY(tt.driver_ids) AND dr.teams && $${n}::text[]))`;

export interface TripRow extends Kilometres {
  service_date: string;
  trip_id: string;
  route_id: string | null;
  direction_id: number | null;
  block_id: string | null;
  headsign: string | null;
  start_time: number | null;
  scheduled_start_at: Date | null;
  scheduled_end_at: Date | null;
  started_at: Date;
  ended_at: Date;
  end_reported: boolean;
  delay_seconds: number | null;
  planned_stops: number;
  recorded_stops: number;
  unpassed_stops: number[];
  last_passed_sequence: number | null;
  last_sequence: number | null;
  boardings: number;
  alightings: number;
  max_load: number;
  vehicle_ids: string[];
  driver_ids: string[];
  device_ids: string[];
}

/** The trips recorded on a date, with what finds their trip updates. */
export function selectTripKeys(db: Db, groupId: string, date: string): Promise<{ trip_id: string; route_id: string | null; start_time: number | null }[]> {
  return db.query<{ trip_id: string; route_id: string | null; start_time: number | null }>(
    'SELECT trip_id, route_id, start_time FROM trip_tracking WHERE group_id = $1 AND service_date = $2', [groupId, date]);
}

/** The trips recorded on a date that `teams` (null: all) see, by trip_id, in batches read from a cursor. */
export function streamTripRows(db: Db, groupId: string, serviceDate: string, teams: string[] | null, batchSize: number): AsyncIterable<TripRow[]> {
  const text = `SELECT to_char(tt.service_date, 'YYYY-MM-DD') AS service_date, tt.trip_id, tt.route_id, tt.direction_id, tt.block_id, tt.headsign, tt.start_time,
      tt.scheduled_start_at, tt.scheduled_end_at, tt.started_at, tt.ended_at, tt.end_reported, tt.delay_seconds, tt.planned_stops, tt.recorded_stops,
      tt.unpassed_stops, tt.last_passed_sequence, tt.last_sequence, tt.tk, tt.vk, tt.recorded_commercial_km, tt.off_itinerary_km, tt.reliable_km, tt.unreliable_km,
      tt.percent_km, tt.boardings, tt.alightings, tt.max_load, tt.vehicle_ids, tt.driver_ids, tt.device_ids
    FROM trip_tracking tt WHERE tt.group_id = $1 AND tt.service_date = $2 AND ${tripVisibleSql(3)} ORDER BY tt.trip_id`;
  return db.stream<TripRow>(text, [groupId, serviceDate, teams], batchSize);
}

const epochSeconds = (column: string) => `floor(date_part('epoch', ${column}))::int8`;

function stopExportQuery(columns: string, scopeTeams: number) {
  return `SELECT s.service_date - DATE '1970-01-01', s.trip_id, ${columns}
    FROM trip_tracking tt
    JOIN trip_tracking_stops s ON s.group_id = tt.group_id AND s.service_date = tt.service_date AND s.trip_id = tt.trip_id
    WHERE tt.group_id = $1 AND tt.service_date BETWEEN $2 AND $3 AND s.service_date BETWEEN $2 AND $3 AND ${tripVisibleSql(scopeTeams)}
    ORDER BY s.service_date, s.trip_id, s.stop_sequence`;
}

// Columns after the date and trip_id.
const TRACKING_STOP_COLUMNS = `tt.route_id, tt.start_time, tt.end_reported, ${epochSeconds('tt.scheduled_end_at')}, tt.last_passed_sequence, tt.last_sequence,
  s.stop_sequence, s.stop_id, s.stop_name, ${epochSeconds('s.scheduled_arrival_at')}, ${epochSeconds('s.scheduled_departure_at')}, ${epochSeconds('s.actual_at')},
  s.delay_seconds, s.source, s.vehicle_id, s.driver_id, s.doors_in, s.doors_out`;

// Columns after the date and trip_id. The vehicle of a stop is the one that passed it, else the trip's first; the position is the one recorded, else the stop's.
const EXPLOITATION_STOP_COLUMNS = `tt.route_id, tt.direction_id, tt.block_id, tt.first_stop_id, tt.last_stop_id, tt.last_sequence,
  COALESCE(s.vehicle_id, tt.vehicle_ids[1]), s.stop_sequence, s.stop_id, s.stop_name, ${epochSeconds('s.actual_at')},
  COALESCE(s.lat, s.stop_lat), COALESCE(s.lon, s.stop_lon), s.gps_valid, s.doors_in, s.doors_out`;

/** The stop rows of export/trip-tracking over the service dates start…end that `teams` see, as COPY text (columns: TRACKING_STOP_COLUMNS). */
export function copyTrackingStops(db: Db, groupId: string, start: string, end: string, teams: string[] | null): AsyncIterable<string> {
  return db.copyOut(stopExportQuery(TRACKING_STOP_COLUMNS, 4), [groupId, start, end, teams]);
}

/** The stop rows of export/vehicle-exploitation over the service dates start…end that `teams` see, as COPY text (columns: EXPLOITATION_STOP_COLUMNS). */
export function copyExploitationStops(db: Db, groupId: string, start: string, end: string, teams: string[] | null): AsyncIterable<string> {
  return db.copyOut(stopExportQuery(EXPLOITATION_STOP_COLUMNS, 4), [groupId, start, end, teams]);
}

/** The most doors counted on one trip of the service dates start…end (null: none). */
export async function selectMaxDoors(db: Db, groupId: string, start: string, end: string): Promise<number | null> {
  const [r] = await db.query<{ doors: number | null }>('SELECT max(doors) AS doors FROM trip_tracking WHERE group_id = $1 AND service_date BETWEEN $2 AND $3', [groupId, start, end]);
  return r?.doors ?? null;
}
