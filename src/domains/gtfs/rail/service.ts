/**
 * The rail-station referential (open data, attached to no group) and the links of network
 * stops to its stations (per group, feature rail_data).
 */
import type { AppContext } from '../../../platform/context.js';
import type { Queryable } from '../../../platform/db/index.js';
import { readCsv } from '../../../platform/csv.js';
import { errors, invalid, ValidationError, type ValidationIssue } from '../../../platform/http/errors.js';
import { publishedGtfsId } from '../queries/publications.js';
import { deleteLinkRow, insertLink, selectLink, selectLinks, selectStation, selectStations, stationExists, updateOrphans, upsertStations, type LinkRow } from '../queries/rail.js';
import type { CreateRailStationLink, RailStation, RailStationLink } from './schemas.js';

/**
 * Stations whose name contains `q` or whose code is `q` (case-insensitive), by name, from after
 * the key `after` ([name, station_id]); `limit + 1` rows, for keyset paging (platform/http/paging).
 */
export async function searchStations(db: Queryable, o: { q?: string | undefined; limit: number; after: unknown[] | null }): Promise<RailStation[]> {
  const pattern = o.q === undefined ? null : `%${o.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return selectStations(db, pattern, o.q ?? null, o.after, o.limit + 1);
}

export async function getStation(db: Queryable, stationId: string): Promise<RailStation> {
  const station = await selectStation(db, stationId);
  if (!station) throw errors.notFound('RailStationNotFound', `Rail station ${JSON.stringify(stationId)} is not in the referential`);
  return station;
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
    return { station_id: id, name, code: get('code') || null, country: get('country') || null, lat: coordinate('lat', 90), lon: coordinate('lon', 180) };
  });
  if (issues.length > 0) throw new ValidationError(issues);

  const now = ctx.clock.now();
  await ctx.db.transaction(async (tx) => {
    for (let i = 0; i < stations.length; i += BATCH) {
      await upsertStations(tx, stations.slice(i, i + BATCH), now);
    }
  });
  return { stations: stations.length };
}

const linkRecord = (r: LinkRow): RailStationLink => ({
  stop_id: r.stop_id,
  stop_name: r.stop_name,
  station_id: r.station_id,
  station: { station_id: r.station_id, name: r.name, code: r.code, country: r.country, lat: r.lat, lon: r.lon },
  is_orphan: r.is_orphan,
  created_at: r.created_at.toISOString(),
});

export async function listLinks(db: Queryable, groupId: string): Promise<RailStationLink[]> {
  const rows = await selectLinks(db, groupId, await publishedGtfsId(db, groupId));
  return rows.map(linkRecord);
}

export async function createLink(ctx: AppContext, groupId: string, input: CreateRailStationLink): Promise<RailStationLink> {
  if (!(await stationExists(ctx.db, input.station_id))) throw invalid(['body', 'station_id'], `Rail station ${JSON.stringify(input.station_id)} is not in the referential`, 'value_error', input.station_id);
  const published = await publishedGtfsId(ctx.db, groupId);
  const created = await insertLink(ctx.db, groupId, input.stop_id, input.station_id, published, ctx.clock.now());
  if (!created) throw errors.conflict('RailStationLinkExists', `Stop ${JSON.stringify(input.stop_id)} is already linked to station ${JSON.stringify(input.station_id)}`);
  return linkRecord((await selectLink(ctx.db, groupId, published, input.stop_id, input.station_id))!);
}

export async function deleteLink(ctx: AppContext, groupId: string, stopId: string, stationId: string): Promise<void> {
  if (!(await deleteLinkRow(ctx.db, groupId, stopId, stationId))) throw errors.notFound('RailStationLinkNotFound', `Stop ${JSON.stringify(stopId)} is not linked to station ${JSON.stringify(stationId)}`);
}

/** At publication: a link is an orphan when its stop is absent from the version published. */
export async function refreshOrphans(tx: Queryable, groupId: string, gtfsId: string): Promise<void> {
  await updateOrphans(tx, groupId, gtfsId);
}
