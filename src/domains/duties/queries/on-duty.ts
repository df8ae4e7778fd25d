/**
 * The live map's read model of the duties open now: one row per duty, with its device's last
 * position (device_latest) and its driver's and vehicle's names (drivers, vehicles), read-only.
 */
import type { Queryable } from '../../../platform/db/index.js';
import { teamsVisibleSql } from '../../../platform/http/teams.js';

export interface OpenDutyRow {
  duty_id: string;
  device_id: string;
  driver_id: string;
  driver_name: string | null;
  vehicle_id: string;
  fleet_number: string | null;
  signed_on_at: Date;
  lat: number | null;
  lon: number | null;
  bearing: number | null;
  speed_kmh: number | null;
  position_at: Date | null;
  trip_id: string | null;
  service_date: string | null;
  start_time: number | null;
}

/**
 * The duties not signed off and signed on since `since`, by vehicle, seen by `teams` (null: every
 * team): a duty is visible when its vehicle's or its driver's teams meet them; the other of the
 * two, when of another team, is named by id only (no driver name, no fleet number).
 */
export function selectOpenDutiesWithPositions(db: Queryable, groupId: string, since: Date, teams: string[] | null): Promise<OpenDutyRow[]> {
  return db.query<OpenDutyRow>(
    `SELECT d.duty_id, d.device_id, d.driver_id, CASE WHEN ${teamsVisibleSql('dr.teams', 3)} THEN dr.driver_name END AS driver_name,
            d.vehicle_id, CASE WHEN ${teamsVisibleSql('v.teams', 3)} THEN v.fleet_number END AS fleet_number, d.signed_on_at,
            l.lat, l.lon, l.bearing, l.speed_kmh, l.position_at, l.trip_id, to_char(l.service_date, 'YYYY-MM-DD') AS service_date, l.start_time
     FROM duties d
     LEFT JOIN device_latest l ON l.group_id = d.group_id AND l.device_id = d.device_id
     LEFT JOIN drivers dr ON dr.group_id = d.group_id AND dr.driver_id = d.driver_id
     LEFT JOIN vehicles v ON v.group_id = d.group_id AND v.vehicle_id = d.vehicle_id
     WHERE d.group_id = $1 AND d.signed_off_at IS NULL AND d.signed_on_at >= $2
       AND (${teamsVisibleSql('v.teams', 3)} OR ${teamsVisibleSql('dr.teams', 3)})
     ORDER BY d.vehicle_id`,
    [groupId, since, teams],
  );
}
