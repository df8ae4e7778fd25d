/**
 * Who a device report is about (the live stream's attribution, live/attribution.ts): the duty open
 * on a device at a time, with the teams of its driver and vehicle; without one, the device as
 * provisioned and the span between its duties. Reads devices, drivers and vehicles read-only.
 */
import type { Queryable } from '../../../platform/db/index.js';

export interface AttributedDutyRow {
  duty_id: string;
  driver_id: string;
  vehicle_id: string;
  signed_on_at: Date;
  signed_off_at: Date | null;
  /** The teams of the driver and of the vehicle. */
  teams: string[];
}

/** A device of the group, its vehicle and teams (its own and its vehicle's), and its latest duty signed on by then, if any. */
export type DeviceLatestDutyRow = { device_id: string; device_vehicle_id: string | null; device_teams: string[] } & Partial<AttributedDutyRow>;

export interface DeviceGapRow {
  vehicle_id: string | null;
  teams: string[];
  /** The last sign-off before the time and the first sign-on after it. */
  gap_from: Date | null;
  gap_until: Date | null;
}

const TEAMS_OF_DUTY = `ARRAY(SELECT DISTINCT t FROM (
    SELECT unnest(dr.teams) AS t FROM drivers dr WHERE dr.group_id = du.group_id AND dr.driver_id = du.driver_id
    UNION SELECT unnest(ve.teams) FROM vehicles ve WHERE ve.group_id = du.group_id AND ve.vehicle_id = du.vehicle_id) x ORDER BY t)`;
const TEAMS_OF_DEVICE = `ARRAY(SELECT DISTINCT t FROM (
    SELECT d.team_id AS t WHERE d.team_id IS NOT NULL
    UNION SELECT unnest(ve.teams) FROM vehicles ve WHERE ve.group_id = d.group_id AND ve.vehicle_id = d.vehicle_id) x ORDER BY t)`;

/** Every device of the group with its latest duty signed on by `at` (open or not). */
export function selectDevicesLatestDuty(db: Queryable, groupId: string, at: Date): Promise<DeviceLatestDutyRow[]> {
  return db.query<DeviceLatestDutyRow>(
    `SELECT d.device_id, d.vehicle_id AS device_vehicle_id, ${TEAMS_OF_DEVICE} AS device_teams,
       du.duty_id, du.driver_id, du.vehicle_id, du.signed_on_at, du.signed_off_at, du.teams
     FROM devices d LEFT JOIN LATERAL (
       SELECT du.duty_id, du.driver_id, du.vehicle_id, du.signed_on_at, du.signed_off_at, ${TEAMS_OF_DUTY} AS teams
       FROM duties du WHERE du.group_id = d.group_id AND du.device_id = d.device_id AND du.signed_on_at <= $2
       ORDER BY du.signed_on_at DESC LIMIT 1) du ON true
     WHERE d.group_id = $1`,
    [groupId, at],
  );
}

/** The duty open on the device at `at` (its sign-off instant included), or null. */
export async function selectDutyAt(db: Queryable, groupId: string, deviceId: string, at: Date): Promise<AttributedDutyRow | null> {
  return (await db.query<AttributedDutyRow>(
    `SELECT du.duty_id, du.driver_id, du.vehicle_id, du.signed_on_at, du.signed_off_at, ${TEAMS_OF_DUTY} AS teams
     FROM duties du
     WHERE du.group_id = $1 AND du.device_id = $2 AND du.signed_on_at <= $3 AND (du.signed_off_at IS NULL OR du.signed_off_at >= $3)
     ORDER BY du.signed_on_at DESC LIMIT 1`,
    [groupId, deviceId, at],
  ))[0] ?? null;
}

/** The device as provisioned, and the gap between its duties around `at`; null for an unknown device. */
export async function selectDeviceGap(db: Queryable, groupId: string, deviceId: string, at: Date): Promise<DeviceGapRow | null> {
  return (await db.query<DeviceGapRow>(
    `SELECT d.vehicle_id, ${TEAMS_OF_DEVICE} AS teams,
       (SELECT max(du.signed_off_at) FROM duties du WHERE du.group_id = d.group_id AND du.device_id = d.device_id AND du.signed_off_at < $3) AS gap_from,
       (SELECT min(du.signed_on_at) FROM duties du WHERE du.group_id = d.group_id AND du.device_id = d.device_id AND du.signed_on_at > $3) AS gap_until
     FROM devices d WHERE d.group_id = $1 AND d.device_id = $2`,
    [groupId, deviceId, at],
  ))[0] ?? null;
}
