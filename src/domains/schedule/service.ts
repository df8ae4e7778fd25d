/**
 * The published schedule of a service day (schemas.ts): the trips running on the date by the
 * rules of gtfs/service-days.ts, with their stop times, the stops they call at and their shapes,
 * read set-based (a handful of queries whatever the number of trips).
 */
import type { Queryable } from '../../platform/db/index.js';
import { ValidationError } from '../../platform/http/errors.js';
import { shapesOf, stopsOf, storedStopTimes, tripsOnServiceDate } from '../gtfs/service-days.js';
import { gtfsSeconds } from '../gtfs/time.js';
import { dayTypesOf } from '../predictions/model.js';
import type { ScheduleTrip, ServiceDaySchedule } from './schemas.js';

export interface ScheduleFilter {
  routeIds?: readonly string[];
  /** Only the trips running at some time of [from, to] (seconds of the service day). */
  from?: number;
  to?: number;
  includeShapes?: boolean;
}

/** Parses the query's window bounds (HH:MM:SS, may pass 24:00:00); a 422 names the bad one. */
export function windowOf(from: string | undefined, to: string | undefined): { from?: number; to?: number } {
  const parse = (v: string | undefined, name: string) => {
    if (v === undefined) return undefined;
    const s = gtfsSeconds(v);
    if (!Number.isFinite(s) || s < 0) throw new ValidationError([{ loc: ['query', name], msg: `${name} must be HH:MM:SS (hours may pass 24), got ${v}`, type: 'value_error', input: v }]);
    return s;
  };
  const f = parse(from, 'from');
  const t = parse(to, 'to');
  if (f !== undefined && t !== undefined && t < f) throw new ValidationError([{ loc: ['query', 'to'], msg: `to (${to}) is before from (${from})`, type: 'value_error', input: to }]);
  return { ...(f !== undefined ? { from: f } : {}), ...(t !== undefined ? { to: t } : {}) };
}

export async function scheduleOfDay(db: Queryable, groupId: string, serviceDate: string, o: ScheduleFilter = {}): Promise<ServiceDaySchedule> {
  const day = await tripsOnServiceDate(db, groupId, serviceDate, o.routeIds ? { routeIds: o.routeIds } : {});
  const dayType = (await dayTypesOf(db, groupId, [serviceDate])).get(serviceDate) ?? 'weekday';
  const out: ServiceDaySchedule = {
    group_id: groupId, service_date: serviceDate, gtfs_id: day.gtfsId, timezone: day.timezone, day_start: day.dayStart.toISOString(), day_type: dayType,
    trips: [], stops: [], shapes: [],
  };
  if (day.gtfsId === null) return out;
  const running = day.trips.filter((t) => (o.to === undefined || t.first_departure <= o.to) && (o.from === undefined || t.last_arrival >= o.from));
  const stored = await storedStopTimes(db, groupId, day.gtfsId, running.map((t) => t.trip_id));
  const stopIds = new Set<string>();
  for (const t of running) {
    const s = stored.get(t.trip_id);
    if (!s) continue;
    const shift = t.first_departure - s.first_departure;
    const at = (x: number | null) => (x === null ? null : x + shift);
    const trip: ScheduleTrip = {
      trip_id: t.trip_id, start_time: t.start_time, route_id: t.route_id, service_id: t.service_id, direction_id: t.direction_id, block_id: t.block_id,
      shape_id: t.shape_id, headsign: t.headsign, frequency: t.frequency, first_departure: t.first_departure, last_arrival: t.last_arrival,
      stop_times: {
        stop_id: s.stops.map((x) => x.stop_id), stop_sequence: s.stops.map((x) => x.stop_sequence), arrival: s.stops.map((x) => at(x.arrival_time)),
        departure: s.stops.map((x) => at(x.departure_time)), timepoint: s.stops.map((x) => x.timepoint), shape_dist_traveled: s.stops.map((x) => x.shape_dist_traveled),
      },
    };
    for (const id of trip.stop_times.stop_id) stopIds.add(id);
    out.trips.push(trip);
  }
  if (stopIds.size > 0) out.stops = (await stopsOf(db, groupId, day.gtfsId, [...stopIds])).map((s) => ({ stop_id: s.stop_id, name: s.name, lat: s.lat, lon: s.lon }));
  if (o.includeShapes !== false) {
    const shapeIds = [...new Set(out.trips.flatMap((t) => (t.shape_id ? [t.shape_id] : [])))];
    for (const [shape_id, points] of await shapesOf(db, groupId, day.gtfsId, shapeIds)) {
      out.shapes.push({ shape_id, lat: points.map((p) => p.lat), lon: points.map((p) => p.lon), dist_traveled: points.map((p) => p.dist_traveled) });
    }
    out.shapes.sort((a, b) => (a.shape_id < b.shape_id ? -1 : a.shape_id > b.shape_id ? 1 : 0));
  }
  return out;
}
