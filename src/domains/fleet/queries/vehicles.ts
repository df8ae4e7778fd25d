/** The vehicles table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';
import { teamsVisibleSql } from '../../../platform/http/teams.js';
import type { VehicleStatus } from '../schemas.js';

export interface VehicleRow {
  vehicle_id: string;
  fleet_number: string;
  license_plate: string;
  teams: string[];
  comment: string | null;
  status: VehicleStatus;
  capacity: number | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'vehicle_id, fleet_number, license_plate, teams, comment, status, capacity, created_at, updated_at';

/** The vehicles of these statuses that `teams` see (null: every team), by id. */
export function selectVehicles(db: Queryable, groupId: string, teams: string[] | null, statuses: readonly VehicleStatus[]): Promise<VehicleRow[]> {
  return db.query<VehicleRow>(
    `SELECT ${COLUMNS} FROM vehicles WHERE group_id = $1 AND ${teamsVisibleSql('teams', 2)} AND status = ANY($3) ORDER BY vehicle_id`,
    [groupId, teams, [...statuses]],
  );
}

export async function selectVehicle(db: Queryable, groupId: string, vehicleId: string): Promise<VehicleRow | null> {
  return (await db.query<VehicleRow>(`SELECT ${COLUMNS} FROM vehicles WHERE group_id = $1 AND vehicle_id = $2`, [groupId, vehicleId]))[0] ?? null;
}

/** The vehicles of these ids or license plates. */
export function selectVehiclesByIdOrPlate(db: Queryable, groupId: string, ids: readonly string[], plates: readonly string[]): Promise<VehicleRow[]> {
  return db.query<VehicleRow>(`SELECT ${COLUMNS} FROM vehicles WHERE group_id = $1 AND (vehicle_id = ANY($2) OR license_plate = ANY($3))`, [groupId, [...ids], [...plates]]);
}

/** The vehicles of these ids that `teams` see (null: every team). */
export function selectVehiclesByIds(db: Queryable, groupId: string, ids: readonly string[], teams: string[] | null): Promise<VehicleRow[]> {
  return db.query<VehicleRow>(`SELECT ${COLUMNS} FROM vehicles WHERE group_id = $1 AND vehicle_id = ANY($2) AND ${teamsVisibleSql('teams', 3)}`, [groupId, [...ids], teams]);
}

/** The ids and teams of every vehicle of the group. */
export function selectVehicleTeams(db: Queryable, groupId: string): Promise<{ vehicle_id: string; teams: string[] }[]> {
  return db.query('SELECT vehicle_id, teams FROM vehicles WHERE group_id = $1', [groupId]);
}

export function countVehiclesByStatus(db: Queryable, groupId: string, teams: string[] | null): Promise<{ status: VehicleStatus; n: number }[]> {
  return db.query(`SELECT status, count(*) AS n FROM vehicles WHERE group_id = $1 AND ${teamsVisibleSql('teams', 2)} GROUP BY status`, [groupId, teams]);
}

/** A row to insert: the row without its timestamps, which the insert sets. */
export type NewVehicle = Omit<VehicleRow, 'created_at' | 'updated_at'>;

export async function insertVehicle(db: Queryable, groupId: string, v: NewVehicle, now: Date): Promise<VehicleRow> {
  const rows = await db.query<VehicleRow>(
    `INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate, teams, comment, status, capacity, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING ${COLUMNS}`,
    [groupId, v.vehicle_id, v.fleet_number, v.license_plate, v.teams, v.comment, v.status, v.capacity, now],
  );
  return rows[0]!;
}

/** A patch: a null field is left as it is; comment and capacity change only when their `set` flag is true. */
export interface VehiclePatch {
  fleet_number: string | null;
  license_plate: string | null;
  teams: string[] | null;
  setComment: boolean;
  comment: string | null;
  status: VehicleStatus | null;
  setCapacity: boolean;
  capacity: number | null;
}

export async function updateVehicleRow(db: Queryable, groupId: string, vehicleId: string, p: VehiclePatch, now: Date): Promise<VehicleRow> {
  const rows = await db.query<VehicleRow>(
    `UPDATE vehicles SET
       fleet_number = COALESCE($3, fleet_number),
       license_plate = COALESCE($4, license_plate),
       teams = COALESCE($5, teams),
       comment = CASE WHEN $6 THEN $7 ELSE comment END,
       status = COALESCE($8, status),
       capacity = CASE WHEN $9 THEN $10::integer ELSE capacity END,
       updated_at = $11
     WHERE group_id = $1 AND vehicle_id = $2 RETURNING ${COLUMNS}`,
    [groupId, vehicleId, p.fleet_number, p.license_plate, p.teams, p.setComment, p.comment, p.status, p.setCapacity, p.capacity, now],
  );
  return rows[0]!;
}
