/** The drivers table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';
import { teamsVisibleSql } from '../../../platform/http/teams.js';

export interface DriverRow {
  driver_id: string;
  driver_name: string;
  staff_number: string;
  teams: string[];
  comment: string | null;
  archived: boolean;
  code: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'driver_id, driver_name, staff_number, teams, comment, archived, code, created_at, updated_at';

export async function selectDriver(db: Queryable, groupId: string, driverId: string): Promise<DriverRow | null> {
  return (await db.query<DriverRow>(`SELECT ${COLUMNS} FROM drivers WHERE group_id = $1 AND driver_id = $2`, [groupId, driverId]))[0] ?? null;
}

/** The drivers `teams` see (null: every team), archived or not, of this code if one is given, by id. */
export function selectDrivers(db: Queryable, groupId: string, teams: string[] | null, archived: boolean, code: string | null): Promise<DriverRow[]> {
  return db.query<DriverRow>(
    `SELECT ${COLUMNS} FROM drivers
     WHERE group_id = $1 AND ${teamsVisibleSql('teams', 2)} AND archived = $3 AND ($4::text IS NULL OR code = $4)
     ORDER BY driver_id`,
    [groupId, teams, archived, code],
  );
}

/** The drivers of these ids or staff numbers. */
export function selectDriversByIdOrStaffNumber(db: Queryable, groupId: string, ids: readonly string[], staffNumbers: readonly string[]): Promise<DriverRow[]> {
  return db.query<DriverRow>(`SELECT ${COLUMNS} FROM drivers WHERE group_id = $1 AND (driver_id = ANY($2) OR staff_number = ANY($3))`, [groupId, [...ids], [...staffNumbers]]);
}

/** The drivers of these ids or codes. */
export function selectDriversByIdOrCode(db: Queryable, groupId: string, ids: readonly string[], codes: readonly string[]): Promise<DriverRow[]> {
  return db.query<DriverRow>(`SELECT ${COLUMNS} FROM drivers WHERE group_id = $1 AND (driver_id = ANY($2) OR code = ANY($3))`, [groupId, [...ids], [...codes]]);
}

/** The drivers of these ids that `teams` see (null: every team). */
export function selectDriversByIds(db: Queryable, groupId: string, ids: readonly string[], teams: string[] | null): Promise<DriverRow[]> {
  return db.query<DriverRow>(`SELECT ${COLUMNS} FROM drivers WHERE group_id = $1 AND driver_id = ANY($2) AND ${teamsVisibleSql('teams', 3)}`, [groupId, [...ids], teams]);
}

/** The ids and teams of every driver of the group. */
export function selectDriverTeams(db: Queryable, groupId: string): Promise<{ driver_id: string; teams: string[] }[]> {
  return db.query('SELECT driver_id, teams FROM drivers WHERE group_id = $1', [groupId]);
}

/** A row to insert: the row without its timestamps, which the insert sets. */
export type NewDriver = Omit<DriverRow, 'created_at' | 'updated_at'>;

export async function insertDriver(db: Queryable, groupId: string, d: NewDriver, now: Date): Promise<DriverRow> {
  const rows = await db.query<DriverRow>(
    `INSERT INTO drivers (group_id, driver_id, driver_name, staff_number, teams, comment, archived, code, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING ${COLUMNS}`,
    [groupId, d.driver_id, d.driver_name, d.staff_number, d.teams, d.comment, d.archived, d.code, now],
  );
  return rows[0]!;
}

/** A patch: a null field is left as it is; comment and code change only when their `set` flag is true. */
export interface DriverPatch {
  driver_name: string | null;
  staff_number: string | null;
  teams: string[] | null;
  setComment: boolean;
  comment: string | null;
  archived: boolean | null;
  setCode: boolean;
  code: string | null;
}

export async function updateDriverRow(db: Queryable, groupId: string, driverId: string, p: DriverPatch, now: Date): Promise<DriverRow> {
  const rows = await db.query<DriverRow>(
    `UPDATE drivers SET
       driver_name = COALESCE($3, driver_name),
       staff_number = COALESCE($4, staff_number),
       teams = COALESCE($5, teams),
       comment = CASE WHEN $6 THEN $7 ELSE comment END,
       archived = COALESCE($8, archived),
       code = CASE WHEN $9 THEN $10 ELSE code END,
       updated_at = $11
     WHERE group_id = $1 AND driver_id = $2 RETURNING ${COLUMNS}`,
    [groupId, driverId, p.driver_name, p.staff_number, p.teams, p.setComment, p.comment, p.archived, p.setCode, p.code, now],
  );
  return rows[0]!;
}
