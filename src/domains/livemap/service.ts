/**
 * What the live network page reads besides the live stream: the map of the network in force
 * (routes, shapes, stops) and a snapshot of the vehicles on duty (last position, driver, trip,
 * delay at the last stop event). The stream then moves the vehicles between two snapshots.
 */
import { LRUCache } from 'lru-cache';
import { DateTime } from 'luxon';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { addDays, localDate } from '../../platform/time.js';
import { formatGtfsTime } from '../gtfs/time.js';
import { lastStopEvents } from '../device/trip-events.js';
import { openDutiesWithPositions } from '../duties/on-duty.js';
import { routeShapes, routesOf, stopsOf, tripRoute, tripShape, tripStopTimes, versionInForce, type ScheduledStopTime } from '../gtfs/service-days.js';
import type { NetworkMap, VehicleOnDuty } from './schemas.js';

export async function networkMap(db: Queryable, scope: GroupScope, serviceDate: string): Promise<NetworkMap> {
  const gtfsId = await versionInForce(db, scope.groupId, serviceDate);
  if (gtfsId === null) return { gtfs_id: null, service_date: serviceDate, timezone: scope.timezone, routes: [], stops: [] };
  const routes = await routesOf(db, scope.groupId, gtfsId);
  const shapeRows = await routeShapes(db, scope.groupId, gtfsId);
  const shapes = new Map<string, [number, number][][]>();
  for (const r of shapeRows) {
    const points = (await tripShape(db, scope.groupId, gtfsId, r.shape_id)).map((p): [number, number] => [round5(p.lon), round5(p.lat)]);
    if (points.length > 1) shapes.set(r.route_id, [...(shapes.get(r.route_id) ?? []), points]);
  }
  const stops = await stopsOf(db, scope.groupId, gtfsId);
  return {
    gtfs_id: gtfsId,
    service_date: serviceDate,
    timezone: scope.timezone,
    routes: routes.map((r) => ({ route_id: r.route_id, short_name: r.short_name, long_name: r.long_name, color: r.color, text_color: r.text_color, shapes: shapes.get(r.route_id) ?? [] })),
    stops: stops.flatMap((s) => (s.lat === null || s.lon === null || (s.location_type ?? 0) !== 0 ? [] : [{ stop_id: s.stop_id, name: s.name, lat: s.lat, lon: s.lon }])),
  };
}

/**
 * Stop times by (group, date, trip, start, version in force): scheduled data changes only when a
 * version is published, which changes the key. One per app (the live map's routes make it).
 */
export function scheduleMemo(): ScheduleMemo {
  return new LRUCache<string, ScheduledStopTime[]>({ max: 5000 });
}
export type ScheduleMemo = LRUCache<string, ScheduledStopTime[]>;

/**
 * The vehicles on duty now (a duty signed on in the last two service days and not signed off),
 * with their last position and, when they run a trip, the delay at its last stop event.
 * Team scope: a duty is visible when its vehicle's or its driver's teams meet the caller's; the
 * other of the two, when of another team, is named by id only (no driver name, no fleet number).
 */
export async function vehiclesOnDuty(db: Queryable, scope: GroupScope, now: Date, schedules: ScheduleMemo): Promise<VehicleOnDuty[]> {
  const rows = await openDutiesWithPositions(db, scope, new Date(now.getTime() - 36 * 3600_000));
  const onTrip = rows.filter((r) => r.trip_id !== null && r.service_date !== null);
  const lastEvents = onTrip.length === 0 ? [] : await lastStopEvents(db, scope.groupId, onTrip.map((r) => ({ device_id: r.device_id, trip_id: r.trip_id!, service_date: r.service_date! })));
  const routes = new Map<string, { route_id: string; short_name: string | null; color: string | null; headsign: string | null }>();
  const out: VehicleOnDuty[] = [];
  for (const r of rows) {
    let trip: VehicleOnDuty['trip'] = null;
    if (r.trip_id !== null && r.service_date !== null) {
      const key = `${r.service_date}|${r.trip_id}`;
      if (!routes.has(key)) {
        const t = await tripRoute(db, scope.groupId, await versionInForce(db, scope.groupId, r.service_date), r.trip_id);
        if (t) routes.set(key, t);
      }
      const info = routes.get(key);
      const event = lastEvents.find((e) => e.device_id === r.device_id);
      let delay: number | null = null;
      if (event) {
        const stops = await scheduleOf(db, schedules, scope.groupId, r.service_date, r.trip_id, r.start_time);
        const st = stops.find((s) => s.stop_sequence === event.stop_sequence);
        const planned = event.event === 'departure' ? (st?.departure_at ?? st?.arrival_at) : (st?.arrival_at ?? st?.departure_at);
        if (planned) delay = Math.round((event.at.getTime() - planned.getTime()) / 1000);
      }
      trip = {
        trip_id: r.trip_id, service_date: r.service_date, start_time: r.start_time === null ? null : formatGtfsTime(r.start_time),
        route_id: info?.route_id ?? null, route_short_name: info?.short_name ?? null, route_color: info?.color ?? null, headsign: info?.headsign ?? null,
        delay_seconds: delay, last_stop_sequence: event?.stop_sequence ?? null, last_event: event?.event ?? null,
      };
    }
    out.push({
      duty_id: r.duty_id, device_id: r.device_id, vehicle_id: r.vehicle_id, fleet_number: r.fleet_number, driver_id: r.driver_id, driver_name: r.driver_name,
      signed_on_at: r.signed_on_at.toISOString(),
      position: r.lat === null || r.lon === null ? null : { lat: r.lat, lon: r.lon, bearing: r.bearing, speed_kmh: r.speed_kmh, at: r.position_at?.toISOString() ?? null },
      trip,
    });
  }
  return out;
}

async function scheduleOf(db: Queryable, schedules: ScheduleMemo, groupId: string, serviceDate: string, tripId: string, startTime: number | null): Promise<ScheduledStopTime[]> {
  const key = `${groupId}|${serviceDate}|${tripId}|${startTime ?? ''}|${await versionInForce(db, groupId, serviceDate)}`;
  let stops = schedules.get(key);
  if (!stops) {
    stops = await tripStopTimes(db, groupId, serviceDate, tripId, startTime === null ? {} : { startTime });
    schedules.set(key, stops);
  }
  return stops;
}

/** Today's service date in the group's time zone (before 03:00, the trips of yesterday still run). */
export function mapDate(now: Date, timezone: string): string {
  const today = localDate(now, timezone);
  return DateTime.fromJSDate(now, { zone: timezone }).hour < 3 ? addDays(today, -1) : today;
}

const round5 = (x: number) => Math.round(x * 1e5) / 1e5;
