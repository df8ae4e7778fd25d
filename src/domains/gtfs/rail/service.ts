/**
 * The rail-station referential (open data, attached to no group) and the links of network
 * stops to its stations (per group, feature rail_data).
 */
import type { AppContext } from '../../../platform/context.js';
import type { Queryable } from '../../../platform/db/index.js';
import { readCsv } from '../../../platform/csv.js';
import { errors, invalid, ValidationError, type ValidationIssue } from '../../../platform/http/errors.js';
import { publishedGtfsId } from '../queries/publications.js';
import type { CreateRailStationLink, RailStation, RailStationLink } from './schemas.js';

const STATION_COLUMNS = 'station_id, name, code, country, lat, lon';

/**
 * Stations whose name contains `q` or whose code is `q` (case-insensitive), by name, from after
 * the key `after` ([name, station_id]); `limit + 1` rows, for keyset paging (platform/http/paging).
 */
export async function searchStations(db: Queryable, o: { q?: string | undefined; limit: number; after: unknown[] | null }): Promise<RailStation[]> {
  const pattern = o.q === undefined ? null : `%${o.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return db.query<RailStation>(
    `SELECT ${STATION_COLUMNS} FROM rail_stations
     WHERE ($1::text IS NULL OR name ILIKE $1 OR lower(code) = lower($2))
       AND ($3::text IS NULL OR (name, station_id) > ($3, $4))
     ORDER BY name, station_id
     LIMIT $5`,
    [pattern, o.q ?? null, o.after?.[0] ?? null, o.after?.[1] ?? null, o.limit + 1],
  );
}

export async function getStation(db: Queryable, stationId: string): Promise<RailStation> {
  const rows = await db.query<RailStation>(`SELECT ${STATION_COLUMNS} FROM rail_stations WHERE station_id = $1`, [stationId]);
  if (!rows[0]) throw errors.notFound('RailStationNotFound', `Rail station ${JSON.stringify(stationId)} is not in the referential`);
  return rows[0];
}

/** Column names accepted in the referential file, first the ours, then the open-data sets' ones. */
const COLUMN_NAMES = {
  station_id: ['station_id', 'id'],
  name: ['name'],
  code: ['code', 'uic', 'uic_code'],
  country: ['country'],
  lat: ['lat', 'latitude'],
  lon: ['lon', 'longitude'],
} as const;

const BATCH = 1000;

/**
 * Imports (inserts or updates) the referential from a CSV file in the project's CSV format
 * (`;` separator, header line): station_id (or id), name, and optionally code (or uic),
 * country, lat (or latitude), lon (or longitude). All or nothing: any bad line refuses the
 * file, every bad line listed.
 */
export async function importStations(ctx: AppContext, csv: string | Buffer): Promise<{ stations: number }> {
  const { header, records } = await readCsv(csv);
  const column = Object.fromEntries(
    Object.entries(COLUMN_NAMES).map(([key, names]) => [key, names.find((n) => header.includes(n)) ?? null]),
  ) as Record<keyof typeof COLUMN_NAMES, string | null>;
  if (!column.station_id || !column.name) throw invalid(['file', 'header'], `the header needs station_id (or id) and name columns; it has: ${header.join(';')}`);

  const issues: ValidationIssue[] = [];
  const seen = new Map<string, number>();
  const stations = records.map(({ line, values }) => {
    const get = (k: keyof typeof COLUMN_NAMES) => (column[k] ? (values[column[k]!] ?? '').trim() : '');
    const coordinate = (k: 'lat' | 'lon', max: number) => {
      const v = get(k);
      if (v === '') return null;
      const n = Number(v.replace(',', '.'));
      if (!Number.isFinite(n) || Math.abs(n) > max) issues.push({ loc: ['file', line, column[k]!], msg: `${column[k]} must be a number from -${max} to ${max}`, type: 'value_error', input: v });
      return n;
    };
    const id = get('station_id');
    const name = get('name');
    if (id === '') issues.push({ loc: ['file', line, column.station_id!], msg: 'station_id is required', type: 'missing' });
    if (name === '') issues.push({ loc: ['file', line, column.name!], msg: 'name is required', type: 'missing' });
    const first = seen.get(id);
    if (id !== '' && first !== undefined) issues.push({ loc: ['file', line, column.station_id!], msg: `station ${id} appears twice (first on line ${first})`, type: 'value_error', input: id });
    seen.set(id, line);
    return { id, name, code: get('code') || null, country: get('country') || null, lat: coordinate('lat', 90), lon: coordinate('lon', 180) };
  });
  if (issues.length > 0) throw new ValidationError(issues);

  const now = ctx.clock.now();
  await ctx.db.transaction(async (tx) => {
    for (let i = 0; i < stations.length; i += BATCH) {
      const b = stations.slice(i, i + BATCH);
      await tx.query(
        `INSERT INTO rail_stations (station_id, name, code, country, lat, lon, updated_at)
         SELECT s.*, $7::timestamptz FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::float8[]) AS s
         ON CONFLICT (station_id) DO UPDATE SET name = excluded.name, code = excluded.code, country = excluded.country,
           lat = excluded.lat, lon = excluded.lon, updated_at = excluded.updated_at`,
        [b.map((s) => s.id), b.map((s) => s.name), b.map((s) => s.code), b.map((s) => s.country), b.map((s) => s.lat), b.map((s) => s.lon), now],
      );
    }
  });
  return { stations: stations.length };
}

interface LinkRow {
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

/** Links with their station, and the stop's name in the version published now ($2). */
const LINK_SELECT = `
  SELECT l.stop_id, s.stop_name, l.station_id, l.is_orphan, l.created_at, r.name, r.code, r.country, r.lat, r.lon
  FROM rail_station_links l
  JOIN rail_stations r ON r.station_id = l.station_id
  LEFT JOIN gtfs_stops s ON s.group_id = l.group_id AND s.gtfs_id = $2 AND s.stop_id = l.stop_id`;

const linkRecord = (r: LinkRow): RailStationLink => ({
  stop_id: r.stop_id,
  stop_name: r.stop_name,
  station_id: r.station_id,
  station: { station_id: r.station_id, name: r.name, code: r.code, country: r.country, lat: r.lat, lon: r.lon },
  is_orphan: r.is_orphan,
  created_at: r.created_at.toISOString(),
});

export async function listLinks(db: Queryable, groupId: string): Promise<RailStationLink[]> {
  const rows = await db.query<LinkRow>(`${LINK_SELECT} WHERE l.group_id = $1 ORDER BY l.stop_id, l.station_id`, [groupId, await publishedGtfsId(db, groupId)]);
  return rows.map(linkRecord);
}

export async function createLink(ctx: AppContext, groupId: string, input: CreateRailStationLink): Promise<RailStationLink> {
  const station = await ctx.db.query('SELECT 1 FROM rail_stations WHERE station_id = $1', [input.station_id]);
  if (station.length === 0) throw invalid(['body', 'station_id'], `Rail station ${JSON.stringify(input.station_id)} is not in the referential`, 'value_error', input.station_id);
  const published = await publishedGtfsId(ctx.db, groupId);
  const rows = await ctx.db.query(
    `INSERT INTO rail_station_links (group_id, stop_id, station_id, is_orphan, created_at)
     SELECT $1, $2, $3, NOT EXISTS (SELECT 1 FROM gtfs_stops s WHERE s.group_id = $1 AND s.gtfs_id = $4 AND s.stop_id = $2), $5
     ON CONFLICT DO NOTHING RETURNING 1`,
    [groupId, input.stop_id, input.station_id, published, ctx.clock.now()],
  );
  if (rows.length === 0) throw errors.conflict('RailStationLinkExists', `Stop ${JSON.stringify(input.stop_id)} is already linked to station ${JSON.stringify(input.station_id)}`);
  const created = await ctx.db.query<LinkRow>(`${LINK_SELECT} WHERE l.group_id = $1 AND l.stop_id = $3 AND l.station_id = $4`, [groupId, published, input.stop_id, input.station_id]);
  return linkRecord(created[0]!);
}

export async function deleteLink(ctx: AppContext, groupId: string, stopId: string, stationId: string): Promise<void> {
  const rows = await ctx.db.query('DELETE FROM rail_station_links WHERE group_id = $1 AND stop_id = $2 AND station_id = $3 RETURNING 1', [groupId, stopId, stationId]);
  if (rows.length === 0) throw errors.notFound('RailStationLinkNotFound', `Stop ${JSON.stringify(stopId)} is not linked to station ${JSON.stringify(stationId)}`);
}

/** At publication: a link is an orphan when its stop is absent from the version published. */
export async function refreshOrphans(tx: Queryable, groupId: string, gtfsId: string): Promise<void> {
  await tx.query(
    `UPDATE rail_station_links l SET is_orphan = NOT EXISTS (
       SELECT 1 FROM gtfs_stops s WHERE s.group_id = l.group_id AND s.gtfs_id = $2 AND s.stop_id = l.stop_id
     )
     WHERE l.group_id = $1`,
    [groupId, gtfsId],
  );
}
