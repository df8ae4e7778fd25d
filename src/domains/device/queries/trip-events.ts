/** Reads of the trip_events table that other domains ask of the device domain (the live map). */
import type { Queryable } from '../../../platform/db/index.js';

export interface LastStopEventRow {
  device_id: string;
  event: string;
  stop_sequence: number;
  at: Date;
}

/** For each (device, trip, service date), the device's last stop event on that trip, if any. */
export function selectLastStopEvents(
  db: Queryable,
  groupId: string,
  keys: { deviceIds: readonly string[]; tripIds: readonly string[]; serviceDates: readonly string[] },
): Promise<LastStopEventRow[]> {
  return db.query<LastStopEventRow>(
    `SELECT x.device_id, x.event, x.stop_sequence, x.at
     FROM unnest($2::text[], $3::text[], $4::date[]) AS k(device_id, trip_id, service_date)
     CROSS JOIN LATERAL (
       SELECT e.device_id, e.event, e.stop_sequence, e.at FROM trip_events e
       WHERE e.group_id = $1 AND e.service_date = k.service_date AND e.trip_id = k.trip_id AND e.device_id = k.device_id AND e.stop_sequence IS NOT NULL
       ORDER BY e.at DESC LIMIT 1) x`,
    [groupId, keys.deviceIds, keys.tripIds, keys.serviceDates],
  );
}
