/** The gtfs_versions table: the imported versions of a group's GTFS. */
import type { Queryable } from '../../../platform/db/index.js';

export interface VersionRow {
  gtfs_id: string;
  name: string;
  imported_at: Date;
  counts: Record<string, number>;
  warning_count: number;
  feed_info: Record<string, string> | null;
  publication_date: Date | null;
}

const VERSION_SELECT = `
  SELECT v.gtfs_id, v.name, v.imported_at, v.counts, v.warning_count, v.feed_info,
         (SELECT max(p.published_at) FROM gtfs_publications p WHERE p.group_id = v.group_id AND p.gtfs_id = v.gtfs_id) AS publication_date
  FROM gtfs_versions v`;

/** The group's versions, imported last first. */
export function selectVersions(db: Queryable, groupId: string): Promise<VersionRow[]> {
  return db.query<VersionRow>(`${VERSION_SELECT} WHERE v.group_id = $1 ORDER BY v.imported_at DESC, v.gtfs_id DESC`, [groupId]);
}

export async function selectVersion(db: Queryable, groupId: string, gtfsId: string): Promise<VersionRow | null> {
  return (await db.query<VersionRow>(`${VERSION_SELECT} WHERE v.group_id = $1 AND v.gtfs_id = $2`, [groupId, gtfsId]))[0] ?? null;
}

export async function versionExists(db: Queryable, groupId: string, gtfsId: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM gtfs_versions WHERE group_id = $1 AND gtfs_id = $2', [groupId, gtfsId])).length > 0;
}

/** A version being imported: its fallback name, no counts nor warnings yet. */
export async function insertVersion(tx: Queryable, groupId: string, gtfsId: string, name: string, importedAt: Date, importedBy: string | null): Promise<void> {
  await tx.query(
    `INSERT INTO gtfs_versions (group_id, gtfs_id, name, imported_at, imported_by, counts, warnings, warning_count)
     VALUES ($1, $2, $3, $4, $5, '{}', '[]', 0)`,
    [groupId, gtfsId, name, importedAt, importedBy],
  );
}

/** The import's report on the version: its name, the rows loaded per file, the warnings and the feed_info.txt row. */
export async function updateVersionReport(
  tx: Queryable,
  groupId: string,
  gtfsId: string,
  r: { name: string; counts: Record<string, number>; warnings: unknown[]; warningCount: number; feedInfo: Record<string, string> | null },
): Promise<void> {
  await tx.query(
    'UPDATE gtfs_versions SET name = $3, counts = $4, warnings = $5, warning_count = $6, feed_info = $7 WHERE group_id = $1 AND gtfs_id = $2',
    [groupId, gtfsId, r.name, JSON.stringify(r.counts), JSON.stringify(r.warnings), r.warningCount, r.feedInfo ? JSON.stringify(r.feedInfo) : null],
  );
}
