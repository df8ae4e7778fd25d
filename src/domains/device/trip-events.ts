/** The trip events devices reported, as other domains read them (the live map's delays). */
import type { Queryable } from '../../platform/db/index.js';
import { selectLastStopEvents, type LastStopEventRow } from './queries/trip-events.js';

export type { LastStopEventRow };

/** For each (device, trip, service date) given, the device's last stop event on that trip, if any. */
export function lastStopEvents(db: Queryable, groupId: string, keys: { device_id: string; trip_id: string; service_date: string }[]): Promise<LastStopEventRow[]> {
  return selectLastStopEvents(db, groupId, { deviceIds: keys.map((k) => k.device_id), tripIds: keys.map((k) => k.trip_id), serviceDates: keys.map((k) => k.service_date) });
}
