/**
 * What the scheduled reference reads of a version (service-days.ts): the trips running on a date,
 * their stop times, shapes, routes and stops (gtfs_trips, gtfs_frequencies, gtfs_calendars,
 * gtfs_calendar_dates, gtfs_stop_times, gtfs_stops, gtfs_shapes, gtfs_routes).
 */
import type { Queryable } from '../../../platform/db/index.js';

/** A trip as stored: the fields of a scheduled trip that do not depend on the instance, and its frequency row. */
export interface TripRow {
  trip_id: string;
  route_id: string;
  service_id: string;
  block_id: string | null;
  shape_id: string | null;
  direction_id: number | null;
  headsign: string | null;
  short_name: string | null;
  wheelchair_accessible: number | null;
  bikes_allowed: number | null;
  first_stop_id: string;
  first_stop_sequence: number;
  last_stop_id: string;
  last_stop_sequence: number;
  stop_count: number;
  /** Seconds since the start of the service day. */
  first_departure: number;
  last_arrival: number;
  f_start: number | null;
  f_end: number | null;
  headway_secs: number | null;
  exact_times: number | null;
}

/** A stop time as stored, with its stop's name and position and its trip's first departure. */
export interface StopTimeRow {
  trip_id: string;
  stop_id: string;
  stop_sequence: number;
  stop_name: string | null;
  stop_lat: number | null;
  stop_lon: number | null;
  stop_headsign: string | null;
  /** Seconds since the start of the service day, unshifted. */
  arrival_time: number | null;
  departure_time: number | null;
  pickup_type: number | null;
  drop_off_type: number | null;
  timepoint: number | null;
  shape_dist_traveled: number | null;
  first_departure: number;
}

export interface ShapePoint {
  sequence: number;
  lat: number;
  lon: number;
  dist_traveled: number | null;
}

export interface RouteInfo {
  route_id: string;
  agency_id: string | null;
  short_name: string | null;
  long_name: string | null;
  description: string | null;
  type: number;
  color: string | null;
  text_color: string | null;
  sort_order: number | null;
}

export interface StopInfo {
  stop_id: string;
  code: string | null;
  name: string | null;
  lat: number | null;
  lon: number | null;
  location_type: number | null;
  parent_station: string | null;
  wheelchair_boarding: number | null;
  platform_code: string | null;
}

/**
 * The trips with stop times of the services running on a service date (`weekday`: its ISO weekday),
 * one row per frequencies.txt row of a trip; `tripIds` and `routeIds` narrow the answer.
 */
export function selectRunningTrips(
  db: Queryable,
  groupId: string,
  gtfsId: string,
  serviceDate: string,
  weekday: number,
  tripIds: readonly string[] | null,
  routeIds: readonly string[] | null,
): Promise<TripRow[]> {
  return db.query<TripRow>(
    `WITH running AS (
       SELECT service_id FROM gtfs_calendars
       WHERE group_id = $1 AND gtfs_id = $2 AND start_date <= $3::date AND end_date >= $3::date
         AND (ARRAY[monday, tuesday, wednesday, thursday, friday, saturday, sunday])[$4::int]
       UNION
       SELECT service_id FROM gtfs_calendar_dates WHERE group_id = $1 AND gtfs_id = $2 AND date = $3::date AND exception_type = 1
       EXCEPT
       SELECT service_id FROM gtfs_calendar_dates WHERE group_id = $1 AND gtfs_id = $2 AND date = $3::date AND exception_type = 2
     )
     SELECT t.trip_id, t.route_id, t.service_id, t.block_id, t.shape_id, t.direction_id, t.trip_headsign AS headsign, t.trip_short_name AS short_name,
            t.wheelchair_accessible, t.bikes_allowed, t.first_stop_id, t.first_stop_sequence, t.first_departure,
            t.last_stop_id, t.last_stop_sequence, t.last_arrival, t.stop_count,
            f.start_time AS f_start, f.end_time AS f_end, f.headway_secs, f.exact_times
     FROM running r
     JOIN gtfs_trips t ON t.group_id = $1 AND t.gtfs_id = $2 AND t.service_id = r.service_id
     LEFT JOIN gtfs_frequencies f ON f.group_id = $1 AND f.gtfs_id = $2 AND f.trip_id = t.trip_id
     WHERE t.stop_count > 0
       AND ($5::text[] IS NULL OR t.trip_id = ANY($5::text[]))
       AND ($6::text[] IS NULL OR t.route_id = ANY($6::text[]))`,
    [groupId, gtfsId, serviceDate, weekday, tripIds ? [...tripIds] : null, routeIds ? [...routeIds] : null],
  );
}

/**
 * The stop times of many trips of a version, by trip and stop_sequence. The trips asked drive the
 * join (unnest: the planner knows how many), each found by its key: filtered with
 * `st.trip_id = ANY(...)` instead, the planner took a city's stop times for 123 rows a trip (35 in
 * fact) and read the version's every trip (230,532) to join a few: 50 trips took 266 ms against
 * 17 ms so, 3 trips 7.3 against 1.0 ms, 13,000 trips 2.4 against 1.9 s (EXPLAIN ANALYZE on a city
 * bench database, 2026-11-29). The tracking rounds and the feeds read the stop times of the trips
 * new to their memo, a few every second in a city.
 */
export function selectStopTimes(db: Queryable, groupId: string, gtfsId: string, tripIds: readonly string[]): Promise<StopTimeRow[]> {
  return db.query<StopTimeRow>(
    `SELECT st.trip_id, st.stop_id, st.stop_sequence, s.stop_name, s.stop_lat, s.stop_lon, st.stop_headsign, st.arrival_time, st.departure_time,
            st.pickup_type, st.drop_off_type, st.timepoint, st.shape_dist_traveled, t.first_departure
     FROM unnest($3::text[]) AS asked(trip_id)
     JOIN gtfs_trips t ON t.group_id = $1 AND t.gtfs_id = $2 AND t.trip_id = asked.trip_id
     JOIN gtfs_stop_times st ON st.group_id = $1 AND st.gtfs_id = $2 AND st.trip_id = asked.trip_id
     LEFT JOIN gtfs_stops s ON s.group_id = $1 AND s.gtfs_id = $2 AND s.stop_id = st.stop_id
     ORDER BY st.trip_id, st.stop_sequence`,
    [groupId, gtfsId, [...new Set(tripIds)]],
  );
}

/** The points of many shapes of a version, by shape_id and sequence. */
export function selectShapesPoints(db: Queryable, groupId: string, gtfsId: string, shapeIds: readonly string[]): Promise<(ShapePoint & { shape_id: string })[]> {
  return db.query<ShapePoint & { shape_id: string }>(
    `SELECT shape_id, shape_pt_sequence AS sequence, shape_pt_lat AS lat, shape_pt_lon AS lon, shape_dist_traveled AS dist_traveled
     FROM gtfs_shapes WHERE group_id = $1 AND gtfs_id = $2 AND shape_id = ANY($3::text[]) ORDER BY shape_id, shape_pt_sequence`,
    [groupId, gtfsId, [...new Set(shapeIds)]],
  );
}

/** The points of a shape, in order. */
export function selectShapePoints(db: Queryable, groupId: string, gtfsId: string, shapeId: string): Promise<ShapePoint[]> {
  return db.query<ShapePoint>(
    `SELECT shape_pt_sequence AS sequence, shape_pt_lat AS lat, shape_pt_lon AS lon, shape_dist_traveled AS dist_traveled
     FROM gtfs_shapes WHERE group_id = $1 AND gtfs_id = $2 AND shape_id = $3 ORDER BY shape_pt_sequence`,
    [groupId, gtfsId, shapeId],
  );
}

/** Routes of a version (all, or those named). */
export function selectRoutes(db: Queryable, groupId: string, gtfsId: string, routeIds?: readonly string[]): Promise<RouteInfo[]> {
  return db.query<RouteInfo>(
    `SELECT route_id, agency_id, route_short_name AS short_name, route_long_name AS long_name, route_desc AS description, route_type AS type,
            route_color AS color, route_text_color AS text_color, route_sort_order AS sort_order
     FROM gtfs_routes WHERE group_id = $1 AND gtfs_id = $2 AND ($3::text[] IS NULL OR route_id = ANY($3::text[]))
     ORDER BY route_sort_order NULLS LAST, route_id`,
    [groupId, gtfsId, routeIds ? [...routeIds] : null],
  );
}

/** Stops of a version (all, or those named). */
export function selectStops(db: Queryable, groupId: string, gtfsId: string, stopIds?: readonly string[]): Promise<StopInfo[]> {
  return db.query<StopInfo>(
    `SELECT stop_id, stop_code AS code, stop_name AS name, stop_lat AS lat, stop_lon AS lon, location_type, parent_station, wheelchair_boarding, platform_code
     FROM gtfs_stops WHERE group_id = $1 AND gtfs_id = $2 AND ($3::text[] IS NULL OR stop_id = ANY($3::text[]))
     ORDER BY stop_id`,
    [groupId, gtfsId, stopIds ? [...stopIds] : null],
  );
}

/** A stop time at one stop, with its trip's first departure and the stop's name. */
export interface StopCallRow {
  trip_id: string;
  stop_sequence: number;
  arrival_time: number | null;
  departure_time: number | null;
  first_departure: number;
  stop_name: string | null;
}

/** The stop times of a version at one stop (of one route, when `routeId` is given). */
export function selectStopCalls(db: Queryable, groupId: string, gtfsId: string, stopId: string, routeId: string | null): Promise<StopCallRow[]> {
  return db.query<StopCallRow>(
    `SELECT st.trip_id, st.stop_sequence, st.arrival_time, st.departure_time, t.first_departure, s.stop_name
     FROM gtfs_stop_times st
     JOIN gtfs_trips t ON t.group_id = st.group_id AND t.gtfs_id = st.gtfs_id AND t.trip_id = st.trip_id
     LEFT JOIN gtfs_stops s ON s.group_id = st.group_id AND s.gtfs_id = st.gtfs_id AND s.stop_id = st.stop_id
     WHERE st.group_id = $1 AND st.gtfs_id = $2 AND st.stop_id = $3 AND ($4::text IS NULL OR t.route_id = $4)`,
    [groupId, gtfsId, stopId, routeId],
  );
}

/** The routes calling at each stop of a version, by stop. */
export function selectLinesByStop(db: Queryable, groupId: string, gtfsId: string): Promise<{ stop_id: string; lines: string[] }[]> {
  return db.query<{ stop_id: string; lines: string[] }>(
    `SELECT st.stop_id, array_agg(DISTINCT t.route_id ORDER BY t.route_id) AS lines
     FROM gtfs_stop_times st JOIN gtfs_trips t ON t.group_id = st.group_id AND t.gtfs_id = st.gtfs_id AND t.trip_id = st.trip_id
     WHERE st.group_id = $1 AND st.gtfs_id = $2 GROUP BY st.stop_id`,
    [groupId, gtfsId],
  );
}

/** The distinct (route, shape) pairs of a version's trips that have a shape, by route and shape. */
export function selectRouteShapes(db: Queryable, groupId: string, gtfsId: string): Promise<{ route_id: string; shape_id: string }[]> {
  return db.query<{ route_id: string; shape_id: string }>(
    'SELECT DISTINCT route_id, shape_id FROM gtfs_trips WHERE group_id = $1 AND gtfs_id = $2 AND shape_id IS NOT NULL ORDER BY route_id, shape_id',
    [groupId, gtfsId],
  );
}

/** A trip's route, with the route's short name and colour, and the trip's headsign. */
export interface TripRouteRow {
  route_id: string;
  short_name: string | null;
  color: string | null;
  headsign: string | null;
}

export async function selectTripRoute(db: Queryable, groupId: string, gtfsId: string | null, tripId: string): Promise<TripRouteRow | null> {
  return (await db.query<TripRouteRow>(
    `SELECT t.route_id, r.route_short_name AS short_name, r.route_color AS color, t.trip_headsign AS headsign
     FROM gtfs_trips t JOIN gtfs_routes r ON r.group_id = t.group_id AND r.gtfs_id = t.gtfs_id AND r.route_id = t.route_id
     WHERE t.group_id = $1 AND t.gtfs_id = $2 AND t.trip_id = $3`,
    [groupId, gtfsId, tripId],
  ))[0] ?? null;
}

/** The routes of the trips of a version that it has, by trip. */
export function selectTripsRoutes(db: Queryable, groupId: string, gtfsId: string | null, tripIds: readonly string[]): Promise<{ trip_id: string; route_id: string }[]> {
  return db.query<{ trip_id: string; route_id: string }>(
    'SELECT trip_id, route_id FROM gtfs_trips WHERE group_id = $1 AND gtfs_id = $2 AND trip_id = ANY($3::text[])',
    [groupId, gtfsId, [...tripIds]],
  );
}
