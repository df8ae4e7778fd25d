/** The danger_zones table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';

export interface ZoneRow {
  danger_zone_id: string;
  name: string;
  lat: number;
  lon: number;
  radius_m: number;
  message: string;
  active_from: Date | null;
  active_to: Date | null;
  archived: boolean;
}

const ZONE_COLUMNS = 'danger_zone_id, name, lat, lon, radius_m, message, active_from, active_to, archived';

export type ZoneValues = Pick<ZoneRow, 'name' | 'lat' | 'lon' | 'radius_m' | 'message'> & { active_from: string | null; active_to: string | null };

export async function insertZone(db: Queryable, groupId: string, zoneId: string, z: ZoneValues, now: Date): Promise<ZoneRow> {
  const rows = await db.query<ZoneRow>(
    `INSERT INTO danger_zones (group_id, danger_zone_id, name, lat, lon, radius_m, message, active_from, active_to, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING ${ZONE_COLUMNS}`,
    [groupId, zoneId, z.name, z.lat, z.lon, z.radius_m, z.message, z.active_from, z.active_to, now],
  );
  return rows[0]!;
}

export async function selectZone(db: Queryable, groupId: string, zoneId: string): Promise<ZoneRow | null> {
  return (await db.query<ZoneRow>(`SELECT ${ZONE_COLUMNS} FROM danger_zones WHERE group_id = $1 AND danger_zone_id = $2`, [groupId, zoneId]))[0] ?? null;
}

export async function updateZone(db: Queryable, groupId: string, zoneId: string, z: ZoneValues & { archived: boolean }, now: Date): Promise<ZoneRow> {
  const rows = await db.query<ZoneRow>(
    `UPDATE danger_zones SET name = $3, lat = $4, lon = $5, radius_m = $6, message = $7, active_from = $8, active_to = $9, archived = $10, updated_at = $11
     WHERE group_id = $1 AND danger_zone_id = $2 RETURNING ${ZONE_COLUMNS}`,
    [groupId, zoneId, z.name, z.lat, z.lon, z.radius_m, z.message, z.active_from, z.active_to, z.archived, now],
  );
  return rows[0]!;
}

/** The zones archived or not, by name. */
export function selectZones(db: Queryable, groupId: string, archived: boolean): Promise<ZoneRow[]> {
  return db.query<ZoneRow>(`SELECT ${ZONE_COLUMNS} FROM danger_zones WHERE group_id = $1 AND archived = $2 ORDER BY name, danger_zone_id`, [groupId, archived]);
}

/** The zones not archived, in force at `now`, whose centre lies in the box (south, north, west, east). */
export function selectZonesInBox(db: Queryable, groupId: string, box: { s: number; n: number; w: number; e: number }, now: Date): Promise<ZoneRow[]> {
  return db.query<ZoneRow>(
    `SELECT ${ZONE_COLUMNS} FROM danger_zones
     WHERE group_id = $1 AND NOT archived AND lat BETWEEN $2 AND $3 AND lon BETWEEN $4 AND $5
       AND (active_from IS NULL OR active_from <= $6) AND (active_to IS NULL OR active_to > $6)`,
    [groupId, box.s, box.n, box.w, box.e, now],
  );
}
