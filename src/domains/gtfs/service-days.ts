/**
 * The scheduled reference, as the other domains read it (planning checks, trips of a date,
 * tracking, exports, GTFS-Realtime, SIRI). One question above all: which trips run on service
 * date D in group G?
 *
 * 1. The GTFS version in force on D (`versionInForce`): of the group's publications, the one
 *    made last on or before D, dates of publication taken in the group's time zone (a version
 *    published during D is in force for the whole of D). Before the first publication, the first
 *    published version (it is the only reference there is for those dates). No publication: none.
 * 2. The services running on D: calendar.txt rows whose date range holds D and whose weekday
 *    column of D is 1, plus calendar_dates.txt additions (exception_type 1) on D, minus its
 *    removals (exception_type 2) on D.
 * 3. Their trips that have stop times. A trip with frequencies.txt rows runs once per start
 *    time `start_time + k × headway_secs < end_time` of each row (GTFS reference), its stop
 *    times shifted so the first departure is that start time; the trip itself is only their
 *    template. An instance is identified by trip_id and start_time, as GTFS-Realtime does.
 * 4. Times are seconds since the start of the service day, and instants are "noon of D in the
 *    group's time zone minus 12 h, plus the seconds" (platform/time.ts), right on DST days.
 */
import { slices } from '../../platform/slices.js';
import type { Queryable } from '../../platform/db/index.js';
import { errors } from '../../platform/http/errors.js';
import { getGroup } from '../groups/service.js';
import { versionInForce } from './queries/publications.js';
import { selectLinesByStop, selectRouteShapes, selectRoutes, selectRunningTrips, selectStopCalls, selectTripRoute, selectTripsRoutes, selectShapePoints, selectShapesPoints, selectStopTimes, selectStops, type RouteInfo, type ShapePoint, type StopCallRow, type StopInfo, type StopTimeRow, type TripRouteRow, type TripRow } from './queries/service-days.js';
import { serviceDayStart } from '../../platform/time.js';
import { atSeconds, formatGtfsTime, gtfsSeconds, isoWeekday } from './time.js';

export { versionInForce };
export type { RouteInfo, ShapePoint, StopInfo };

/** A scheduled trip instance of a service day: the stored trip, its first departure and its frequency row. */
export interface ScheduledTrip extends Omit<TripRow, 'f_start' | 'f_end' | 'headway_secs' | 'exact_times'> {
  /** HH:MM:SS of the first departure: with trip_id, identifies a frequency instance (GTFS-Realtime). */
  start_time: string;
  /** The frequencies.txt row an instance comes from; null for a trip of the timetable. */
  frequency: { headway_secs: number; exact_times: number } | null;
  first_departure_at: Date;
  last_arrival_at: Date;
}

export interface ServiceDay {
  groupId: string;
  serviceDate: string;
  /** The version in force on the date; null when the group has published no GTFS. */
  gtfsId: string | null;
  timezone: string;
  /** Instant the service day's times count from (noon minus 12 h). */
  dayStart: Date;
  /** Ordered by first departure, then trip_id. */
  trips: ScheduledTrip[];
}

/** A stop time of a trip instance: as stored (times unshifted, seconds of the service day; null where the feed gives none), and as instants. */
export interface ScheduledStopTime extends Omit<StopTimeRow, 'trip_id' | 'first_departure'> {
  arrival_at: Date | null;
  departure_at: Date | null;
}

export async function groupTimezone(db: Queryable, groupId: string): Promise<string> {
  const group = await getGroup(db, groupId);
  if (!group) throw errors.groupNotFound(groupId);
  return group.timezone;
}

/**
 * The trips that run on a service date (see the rules at the top of this file).
 * `gtfsId` reads a given version instead of the one in force (to check a version before
 * publishing it); `tripIds` and `routeIds` narrow the answer.
 */
export async function tripsOnServiceDate(
  db: Queryable,
  groupId: string,
  serviceDate: string,
  o: { gtfsId?: string; tripIds?: readonly string[]; routeIds?: readonly string[] } = {},
): Promise<ServiceDay> {
  const timezone = await groupTimezone(db, groupId);
  const dayStart = serviceDayStart(serviceDate, timezone);
  const gtfsId = o.gtfsId ?? (await versionInForce(db, groupId, serviceDate));
  const day: ServiceDay = { groupId, serviceDate, gtfsId, timezone, dayStart, trips: [] };
  if (gtfsId === null) return day;

  const rows = await selectRunningTrips(db, groupId, gtfsId, serviceDate, isoWeekday(serviceDate), o.tripIds ?? null, o.routeIds ?? null);

  // A whole network's day is thousands of trips: made in slices, so the requests waiting are answered between two.
  const turn = slices();
  for (const r of rows) {
    const wait = turn();
    if (wait) await wait;
    if (r.f_start === null) {
      day.trips.push(scheduledTrip(r, 0, null, dayStart));
      continue;
    }
    const frequency = { headway_secs: r.headway_secs!, exact_times: r.exact_times! };
    for (let start = r.f_start; start < r.f_end!; start += r.headway_secs!) {
      day.trips.push(scheduledTrip(r, start - r.first_departure, frequency, dayStart));
    }
  }
  day.trips.sort((a, b) => a.first_departure - b.first_departure || (a.trip_id < b.trip_id ? -1 : a.trip_id > b.trip_id ? 1 : 0));
  return day;
}

/** A day's trips indexed (dayIndex): made once per ServiceDay object. */
export interface DayIndex {
  /** The timetable trips by id (a frequency trip's instances share a trip_id: they are left out). */
  byId: Map<string, ScheduledTrip>;
  /** The timetable trips of each block, in the day's order. */
  blocks: Map<string, ScheduledTrip[]>;
  /** The timetable trips by first departure (stable: the day's order among equals). */
  byDeparture: ScheduledTrip[];
  /** The longest run of a timetable trip, first departure to last arrival (seconds). */
  longestRun: number;
  /** Every trip instance by trip_id, a frequency trip's instances together, in the day's order. */
  instances: Map<string, ScheduledTrip[]>;
}

/**
 * The day's trips indexed by id, by block and by first departure. Kept per schedule object: the
 * memo's days are read once per version and date (gtfs/schedule-memo.ts), and a city's day has
 * some 55,000 trips; walking them all costs 40–80 ms a time on a city's heap (objects scattered
 * through a gigabyte), which every feed rebuild did several times (bench/RESULTS.md, 2026-11-29
 * evening).
 */
const dayIndexes = new WeakMap<ServiceDay, DayIndex>();

export function dayIndex(day: ServiceDay): DayIndex {
  const known = dayIndexes.get(day);
  if (known) return known;
  const byId = new Map<string, ScheduledTrip>();
  const blocks = new Map<string, ScheduledTrip[]>();
  const instances = new Map<string, ScheduledTrip[]>();
  const timetable: ScheduledTrip[] = [];
  let longestRun = 0;
  for (const t of day.trips) {
    (instances.get(t.trip_id) ?? instances.set(t.trip_id, []).get(t.trip_id)!).push(t);
    if (t.frequency) continue;
    byId.set(t.trip_id, t);
    timetable.push(t);
    longestRun = Math.max(longestRun, t.last_arrival - t.first_departure);
    if (t.block_id !== null) (blocks.get(t.block_id) ?? blocks.set(t.block_id, []).get(t.block_id)!).push(t);
  }
  // Array.prototype.sort is stable: among equal departures, the day's order.
  const byDeparture = timetable.sort((a, b) => a.first_departure - b.first_departure);
  const index = { byId, blocks, byDeparture, longestRun, instances };
  dayIndexes.set(day, index);
  return index;
}

/**
 * The timetable trips whose run (first departure to last arrival) overlaps [from, to], seconds of
 * the service day, in order of first departure: only those departing in [from − longest run, to]
 * are looked at.
 */
export function tripsOverlapping(index: DayIndex, from: number, to: number): ScheduledTrip[] {
  const trips = index.byDeparture;
  const earliest = from - index.longestRun;
  let lo = 0;
  let hi = trips.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (trips[mid]!.first_departure < earliest) lo = mid + 1;
    else hi = mid;
  }
  const out: ScheduledTrip[] = [];
  for (let i = lo; i < trips.length && trips[i]!.first_departure <= to; i++) if (trips[i]!.last_arrival >= from) out.push(trips[i]!);
  return out;
}

function scheduledTrip(r: TripRow, shift: number, frequency: ScheduledTrip['frequency'], dayStart: Date): ScheduledTrip {
  const { f_start: _s, f_end: _e, headway_secs: _h, exact_times: _x, ...trip } = r;
  const first = r.first_departure + shift;
  const last = r.last_arrival + shift;
  return {
    ...trip,
    start_time: formatGtfsTime(first),
    frequency,
    first_departure: first,
    last_arrival: last,
    first_departure_at: atSeconds(dayStart, first)!,
    last_arrival_at: atSeconds(dayStart, last)!,
  };
}

/**
 * The stop times of one trip on a service date, with stop names and positions, ordered by
 * stop_sequence. For a frequency instance give its `startTime` (HH:MM:SS or seconds): times are
 * shifted so the first departure is that start time. Empty when the version has no such trip.
 */
export async function tripStopTimes(
  db: Queryable,
  groupId: string,
  serviceDate: string,
  tripId: string,
  o: { gtfsId?: string; startTime?: string | number } = {},
): Promise<ScheduledStopTime[]> {
  const timezone = await groupTimezone(db, groupId);
  const gtfsId = o.gtfsId ?? (await versionInForce(db, groupId, serviceDate));
  if (gtfsId === null) return [];
  const stored = (await storedStopTimes(db, groupId, gtfsId, [tripId])).get(tripId);
  if (!stored) return [];
  return onServiceDay(stored, serviceDayStart(serviceDate, timezone), o.startTime);
}

/** A trip's stop times as the version stores them: seconds since the start of the service day, unshifted. */
export interface StoredStopTimes {
  first_departure: number;
  stops: Omit<ScheduledStopTime, 'arrival_at' | 'departure_at'>[];
}

/**
 * The stored stop times of many trips of a version in one query (readers that need whole sets of
 * trips, such as the passenger feeds, never read them trip by trip). Trips the version lacks are
 * absent from the map.
 */
export async function storedStopTimes(db: Queryable, groupId: string, gtfsId: string, tripIds: readonly string[]): Promise<Map<string, StoredStopTimes>> {
  const out = new Map<string, StoredStopTimes>();
  if (tripIds.length === 0) return out;
  const rows = await selectStopTimes(db, groupId, gtfsId, tripIds);
  // A stop's strings come once per row from the driver: the rows of one stop share them.
  const shared = new Map<string, string>();
  const one = (v: string | null) => (v === null ? null : (shared.get(v) ?? (shared.set(v, v), v)));
  for (const r of rows) {
    const trip = out.get(r.trip_id) ?? out.set(r.trip_id, { first_departure: r.first_departure, stops: [] }).get(r.trip_id)!;
    trip.stops.push({
      stop_id: one(r.stop_id)!, stop_sequence: r.stop_sequence, stop_name: one(r.stop_name), stop_lat: r.stop_lat, stop_lon: r.stop_lon, stop_headsign: one(r.stop_headsign),
      arrival_time: r.arrival_time, departure_time: r.departure_time, pickup_type: r.pickup_type, drop_off_type: r.drop_off_type, timepoint: r.timepoint,
      shape_dist_traveled: r.shape_dist_traveled,
    });
  }
  return out;
}

/**
 * Stored stop times as instants of a service day (`dayStart`: serviceDayStart of the date); for a
 * frequency instance give its `startTime` (HH:MM:SS or seconds): times are shifted so the first
 * departure is that start time.
 */
export function onServiceDay(stored: StoredStopTimes, dayStart: Date, startTime?: string | number): ScheduledStopTime[] {
  const start = typeof startTime === 'string' ? gtfsSeconds(startTime) : startTime;
  if (start !== undefined && start < 0) throw new Error(`invalid start time ${String(startTime)}`);
  const shift = start === undefined ? 0 : start - stored.first_departure;
  return stored.stops.map((r) => {
    const arrival = r.arrival_time === null ? null : r.arrival_time + shift;
    const departure = r.departure_time === null ? null : r.departure_time + shift;
    // Every field written out, not spread over the row and overridden: a spread with fields
    // overridden made objects of a slow (dictionary) shape, 725 bytes a stop against about 390
    // now with its two Dates; a city's feeds hold 450,000 (bench/RESULTS.md, 2026-11-29 afternoon).
    return {
      stop_id: r.stop_id, stop_sequence: r.stop_sequence, stop_name: r.stop_name, stop_lat: r.stop_lat, stop_lon: r.stop_lon, stop_headsign: r.stop_headsign,
      arrival_time: arrival, departure_time: departure, pickup_type: r.pickup_type, drop_off_type: r.drop_off_type, timepoint: r.timepoint,
      shape_dist_traveled: r.shape_dist_traveled, arrival_at: atSeconds(dayStart, arrival), departure_at: atSeconds(dayStart, departure),
    };
  });
}

/** The points of many shapes of a version in one query, by shape_id, in order. */
export async function shapesOf(db: Queryable, groupId: string, gtfsId: string, shapeIds: readonly string[]): Promise<Map<string, ShapePoint[]>> {
  const out = new Map<string, ShapePoint[]>();
  if (shapeIds.length === 0) return out;
  const rows = await selectShapesPoints(db, groupId, gtfsId, shapeIds);
  for (const { shape_id, ...p } of rows) (out.get(shape_id) ?? out.set(shape_id, []).get(shape_id)!).push(p);
  return out;
}

/** The points of a shape, in order (for kilometres: cheap-ruler over lon/lat). */
export async function tripShape(db: Queryable, groupId: string, gtfsId: string, shapeId: string): Promise<ShapePoint[]> {
  return selectShapePoints(db, groupId, gtfsId, shapeId);
}

/** Routes of a version (all, or those named). */
export async function routesOf(db: Queryable, groupId: string, gtfsId: string, routeIds?: readonly string[]): Promise<RouteInfo[]> {
  return selectRoutes(db, groupId, gtfsId, routeIds);
}

/** Stops of a version (all, or those named). */
export async function stopsOf(db: Queryable, groupId: string, gtfsId: string, stopIds?: readonly string[]): Promise<StopInfo[]> {
  return selectStops(db, groupId, gtfsId, stopIds);
}

/** The stop times of a version at one stop (of one route, when `routeId` is given), unshifted, with their trips' first departures. */
export function stopCalls(db: Queryable, groupId: string, gtfsId: string, stopId: string, routeId: string | null): Promise<StopCallRow[]> {
  return selectStopCalls(db, groupId, gtfsId, stopId, routeId);
}

/** The routes calling at each stop of a version. */
export function linesByStop(db: Queryable, groupId: string, gtfsId: string): Promise<{ stop_id: string; lines: string[] }[]> {
  return selectLinesByStop(db, groupId, gtfsId);
}

/** The shapes of each route of a version (the distinct shapes of its trips), by route and shape. */
export function routeShapes(db: Queryable, groupId: string, gtfsId: string): Promise<{ route_id: string; shape_id: string }[]> {
  return selectRouteShapes(db, groupId, gtfsId);
}

/** A trip's route (short name, colour) and headsign in a version; null when the version has no such trip. */
export function tripRoute(db: Queryable, groupId: string, gtfsId: string | null, tripId: string): Promise<TripRouteRow | null> {
  return selectTripRoute(db, groupId, gtfsId, tripId);
}

/** The route of each trip of a version among `tripIds` (trips the version lacks are absent). */
export function tripsRoutes(db: Queryable, groupId: string, gtfsId: string | null, tripIds: readonly string[]): Promise<{ trip_id: string; route_id: string }[]> {
  return selectTripsRoutes(db, groupId, gtfsId, tripIds);
}
