/** The depots table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';
import { teamVisibleSql } from '../../../platform/http/teams.js';

export interface DepotRow {
  depot_id: string;
  name: string;
  team_id: string | null;
  address: string | null;
  latitude: number | null;
  longitude: number | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'depot_id, name, team_id, address, latitude, longitude, created_at, updated_at';

/** The depots `teams` see (null: every team), by id. */
export function selectDepots(db: Queryable, groupId: string, teams: string[] | null): Promise<DepotRow[]> {
  return db.query<DepotRow>(`SELECT ${COLUMNS} FROM depots WHERE group_id = $1 AND ${teamVisibleSql('team_id', 2)} ORDER BY depot_id`, [groupId, teams]);
}

export async function selectDepot(db: Queryable, groupId: string, depotId: string): Promise<DepotRow | null> {
  return (await db.query<DepotRow>(`SELECT ${COLUMNS} FROM depots WHERE group_id = $1 AND depot_id = $2`, [groupId, depotId]))[0] ?? null;
}

/** The new depot, or null when the group has one of this id already. */
export async function insertDepot(db: Queryable, groupId: string, d: Omit<DepotRow, 'created_at' | 'updated_at'>, now: Date): Promise<DepotRow | null> {
  const rows = await db.query<DepotRow>(
    `INSERT INTO depots (group_id, depot_id, name, team_id, address, latitude, longitude, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (group_id, depot_id) DO NOTHING RETURNING ${COLUMNS}`,
    [groupId, d.depot_id, d.name, d.team_id, d.address, d.latitude, d.longitude, now],
  );
  return rows[0] ?? null;
}

/** A patch: a null name is left as it is; the others change only when their `set` flag is true (latitude and longitude together). */
export interface DepotPatch {
  name: string | null;
  setTeam: boolean;
  team_id: string | null;
  setAddress: boolean;
  address: string | null;
  setPosition: boolean;
  latitude: number | null;
  longitude: number | null;
}

export async function updateDepotRow(db: Queryable, groupId: string, depotId: string, p: DepotPatch, now: Date): Promise<DepotRow> {
  const rows = await db.query<DepotRow>(
    `UPDATE depots SET
       name = COALESCE($3, name),
       team_id = CASE WHEN $4 THEN $5 ELSE team_id END,
       address = CASE WHEN $6 THEN $7 ELSE address END,
       latitude = CASE WHEN $8 THEN $9::double precision ELSE latitude END,
       longitude = CASE WHEN $8 THEN $10::double precision ELSE longitude END,
       updated_at = $11
     WHERE group_id = $1 AND depot_id = $2 RETURNING ${COLUMNS}`,
    [groupId, depotId, p.name, p.setTeam, p.team_id, p.setAddress, p.address, p.setPosition, p.latitude, p.longitude, now],
  );
  return rows[0]!;
}
