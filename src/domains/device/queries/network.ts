/**
 * The passenger feeds' read model of the vehicles now: the latest position of each vehicle, read
 * from device_latest and positions, with the vehicle named by the duty open on the device (duties)
 * or the device as mounted (devices) and its fleet number (vehicles), read-only.
 */
import type { Queryable } from '../../../platform/db/index.js';

export interface VehiclePositionRow {
  vehicle_id: string;
  fleet_number: string | null;
  device_id: string;
  at: Date;
  lat: number;
  lon: number;
  speed_kmh: number | null;
  bearing: number | null;
  trip_id: string | null;
  service_date: string | null;
  /** Seconds since the start of the service day. */
  start_time: number | null;
}

/**
 * The latest position at or before `now` of each vehicle seen since `since`, by vehicle_id: the
 * vehicle of the duty open on the device at the position's time, else the vehicle the device is
 * mounted in (a device with neither is left out). Of two devices in one vehicle, the latest
 * position wins. A device whose latest position is dated after now is read from its positions.
 */
export function selectVehiclePositions(db: Queryable, groupId: string, since: Date, now: Date): Promise<VehiclePositionRow[]> {
  return db.query<VehiclePositionRow>(
    `SELECT DISTINCT ON (pick.vehicle_id) pick.vehicle_id, v.fleet_number, l.device_id, p.at, p.lat, p.lon, p.speed_kmh, p.bearing, p.trip_id,
            to_char(p.service_date, 'YYYY-MM-DD') AS service_date, p.start_time
     FROM device_latest l
     CROSS JOIN LATERAL (
       SELECT l.position_at AS at, l.lat, l.lon, l.speed_kmh, l.bearing, l.trip_id, l.service_date, l.start_time WHERE l.position_at <= $3
       UNION ALL
       (SELECT x.at, x.lat, x.lon, x.speed_kmh, x.bearing, x.trip_id, x.service_date, x.start_time FROM positions x
        WHERE l.position_at > $3 AND x.group_id = l.group_id AND x.device_id = l.device_id AND x.at >= $2 AND x.at <= $3
        ORDER BY x.at DESC LIMIT 1)
     ) p
     LEFT JOIN LATERAL (
       SELECT d.vehicle_id FROM duties d
       WHERE d.group_id = l.group_id AND d.device_id = l.device_id AND d.signed_on_at <= p.at AND (d.signed_off_at IS NULL OR d.signed_off_at > p.at)
       ORDER BY d.signed_on_at DESC LIMIT 1
     ) duty ON true
     LEFT JOIN devices dev ON dev.group_id = l.group_id AND dev.device_id = l.device_id
     CROSS JOIN LATERAL (SELECT COALESCE(duty.vehicle_id, dev.vehicle_id) AS vehicle_id) pick
     LEFT JOIN vehicles v ON v.group_id = l.group_id AND v.vehicle_id = pick.vehicle_id
     WHERE l.group_id = $1 AND l.position_at >= $2 AND pick.vehicle_id IS NOT NULL
     ORDER BY pick.vehicle_id, p.at DESC`,
    [groupId, since, now],
  );
}
