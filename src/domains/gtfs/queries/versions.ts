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
