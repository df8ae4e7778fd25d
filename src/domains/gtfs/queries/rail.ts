/**
 * The rail_stations table (the open-data referential, attached to no group) and rail_station_links
 * (a group's links of network stops to its stations), read with the stop names of gtfs_stops.
 */
import type { Queryable } from '../../../platform/db/index.js';
import type { RailStation } from '../rail/schemas.js';

const STATION_COLUMNS = 'station_id, name, code, country, lat, lon';

/**
 * Stations whose name matches the ILIKE `pattern` or whose code is `code` (case-insensitive), by
 * name, from after the key `after` ([name, station_id]); at most `limit` rows.
 */
export function selectStations(db: Queryable, pattern: string | null, code: string | null, after: unknown[] | null, limit: number): Promise<RailStation[]> {
  return db.query<RailStation>(
    `SELECT ${STATION_COLUMNS} FROM rail_stations
     WHERE ($1::text IS NULL OR name ILIKE $1 OR lower(code) = lower($2))
       AND ($3::text IS NULL OR (name, station_id) > ($3, $4))
     ORDER BY name, station_id
     LIMIT $5`,
    [pattern, code, after?.[0] ?? null, after?.[1] ?? null, limit],
  );
}

export async function selectStation(db: Queryable, stationId: string): Promise<RailStation | null> {
  return (await db.query<RailStation>(`SELECT ${STATION_COLUMNS} FROM rail_stations WHERE station_id = $1`, [stationId]))[0] ?? null;
}

export async function stationExists(db: Queryable, stationId: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM rail_stations WHERE station_id = $1', [stationId])).length > 0;
}

/** Inserts the stations, or updates those of the same station_id. */
export async function upsertStations(tx: Queryable, stations: readonly RailStation[], now: Date): Promise<void> {
  await tx.query(
    `INSERT INTO rail_stations (station_id, name, code, country, lat, lon, updated_at)
     SELECT s.*, $7::timestamptz FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::float8[]) AS s
     ON CONFLICT (station_id) DO UPDATE SET name = excluded.name, code = excluded.code, country = excluded.country,
       lat = excluded.lat, lon = excluded.lon, updated_at = excluded.updated_at`,
    [stations.map((s) => s.station_id), stations.map((s) => s.name), stations.map((s) => s.code), stations.map((s) => s.country), stations.map((s) => s.lat), stations.map((s) => s.lon), now],
  );
}

/** A link with its station, and its stop's name in a version. */
export interface LinkRow {
  stop_id: string;
  stop_name: string | null;
  station_id: string;
  is_orphan: boolean;
  created_at: Date;
  name: string;
  code: string | null;
  country: string | null;
  lat: number | null;
  lon: number | null;
}

/** Links with their station, and the stop's name in the version $2. */
const LINK_SELECT = `
  SELECT l.stop_id, s.stop_name, l.station_id, l.is_orphan, l.created_at, r.name, r.code, r.country, r.lat, r.lon
  FROM rail_station_links l
  JOIN rail_stations r ON r.station_id = l.station_id
  LEFT JOIN gtfs_stops s ON s.group_id = l.group_id AND s.gtfs_id = $2 AND s.stop_id = l.stop_id`;

/** The group's links by stop and station, with the stop names of `gtfsId`. */
export function selectLinks(db: Queryable, groupId: string, gtfsId: string | null): Promise<LinkRow[]> {
  return db.query<LinkRow>(`${LINK_SELECT} WHERE l.group_id = $1 ORDER BY l.stop_id, l.station_id`, [groupId, gtfsId]);
}

export async function selectLink(db: Queryable, groupId: string, gtfsId: string | null, stopId: string, stationId: string): Promise<LinkRow | null> {
  return (await db.query<LinkRow>(`${LINK_SELECT} WHERE l.group_id = $1 AND l.stop_id = $3 AND l.station_id = $4`, [groupId, gtfsId, stopId, stationId]))[0] ?? null;
}

/** The new link, an orphan when `gtfsId` has no such stop; false when it exists already. */
export async function insertLink(db: Queryable, groupId: string, stopId: string, stationId: string, gtfsId: string | null, now: Date): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO rail_station_links (group_id, stop_id, station_id, is_orphan, created_at)
     SELECT $1, $2, $3, NOT EXISTS (SELECT 1 FROM gtfs_stops s WHERE s.group_id = $1 AND s.gtfs_id = $4 AND s.stop_id = $2), $5
     ON CONFLICT DO NOTHING RETURNING 1`,
    [groupId, stopId, stationId, gtfsId, now],
  );
  return rows.length > 0;
}

/** False when there is no such link. */
export async function deleteLinkRow(db: Queryable, groupId: string, stopId: string, stationId: string): Promise<boolean> {
  return (await db.query('DELETE FROM rail_station_links WHERE group_id = $1 AND stop_id = $2 AND station_id = $3 RETURNING 1', [groupId, stopId, stationId])).length > 0;
}

/** Flags as orphans the group's links whose stop is absent from `gtfsId`, and the others as not. */
export async function updateOrphans(tx: Queryable, groupId: string, gtfsId: string): Promise<void> {
  await tx.query(
    `UPDATE rail_station_links l SET is_orphan = NOT EXISTS (
       SELECT 1 FROM gtfs_stops s WHERE s.group_id = l.group_id AND s.gtfs_id = $2 AND s.stop_id = l.stop_id
     )
     WHERE l.group_id = $1`,
    [groupId, gtfsId],
  );
}
