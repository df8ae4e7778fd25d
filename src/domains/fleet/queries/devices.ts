/** The devices table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';
import { teamVisibleSql } from '../../../platform/http/teams.js';

export interface DeviceRow {
  device_id: string;
  label: string | null;
  vehicle_id: string | null;
  team_id: string | null;
  archived: boolean;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'device_id, label, vehicle_id, team_id, archived, created_at, updated_at';

/** The devices `teams` see (null: every team), archived or not, by id. */
export function selectDevices(db: Queryable, groupId: string, teams: string[] | null, archived: boolean): Promise<DeviceRow[]> {
  return db.query<DeviceRow>(
    `SELECT ${COLUMNS} FROM devices WHERE group_id = $1 AND ${teamVisibleSql('team_id', 2)} AND archived = $3 ORDER BY device_id`,
    [groupId, teams, archived],
  );
}

export async function selectDevice(db: Queryable, groupId: string, deviceId: string): Promise<DeviceRow | null> {
  return (await db.query<DeviceRow>(`SELECT ${COLUMNS} FROM devices WHERE group_id = $1 AND device_id = $2`, [groupId, deviceId]))[0] ?? null;
}

/** The devices of these ids. */
export function selectDevicesByIds(db: Queryable, groupId: string, ids: readonly string[]): Promise<DeviceRow[]> {
  return db.query<DeviceRow>(`SELECT ${COLUMNS} FROM devices WHERE group_id = $1 AND device_id = ANY($2)`, [groupId, [...ids]]);
}

/** The new device, or null when the group has one of this id already. */
export async function insertDevice(db: Queryable, groupId: string, d: Omit<DeviceRow, 'created_at' | 'updated_at'>, now: Date): Promise<DeviceRow | null> {
  const rows = await db.query<DeviceRow>(
    `INSERT INTO devices (group_id, device_id, label, vehicle_id, team_id, archived, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (group_id, device_id) DO NOTHING RETURNING ${COLUMNS}`,
    [groupId, d.device_id, d.label, d.vehicle_id, d.team_id, d.archived, now],
  );
  return rows[0] ?? null;
}

/** A patch: a null `archived` is left as it is; the others change only when their `set` flag is true. */
export interface DevicePatch {
  setLabel: boolean;
  label: string | null;
  setVehicle: boolean;
  vehicle_id: string | null;
  setTeam: boolean;
  team_id: string | null;
  archived: boolean | null;
}

export async function updateDeviceRow(db: Queryable, groupId: string, deviceId: string, p: DevicePatch, now: Date): Promise<DeviceRow> {
  const rows = await db.query<DeviceRow>(
    `UPDATE devices SET
       label = CASE WHEN $3 THEN $4 ELSE label END,
       vehicle_id = CASE WHEN $5 THEN $6 ELSE vehicle_id END,
       team_id = CASE WHEN $7 THEN $8 ELSE team_id END,
       archived = COALESCE($9, archived),
       updated_at = $10
     WHERE group_id = $1 AND device_id = $2 RETURNING ${COLUMNS}`,
    [groupId, deviceId, p.setLabel, p.label, p.setVehicle, p.vehicle_id, p.setTeam, p.team_id, p.archived, now],
  );
  return rows[0]!;
}
