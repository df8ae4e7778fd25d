/** A GTFS version's name and first publication (gtfs_versions, gtfs_publications: docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';

export interface VersionSummaryRow {
  id: string;
  name: string;
  publication_date: Date | null;
}

/** The version's id, name and first publication time, if the group holds it. */
export function selectVersionSummary(db: Queryable, groupId: string, gtfsId: string): Promise<VersionSummaryRow[]> {
  return db.query<VersionSummaryRow>(
    `SELECT v.gtfs_id AS id, v.name, (SELECT min(p.published_at) FROM gtfs_publications p WHERE p.group_id = v.group_id AND p.gtfs_id = v.gtfs_id) AS publication_date
           FROM gtfs_versions v WHERE v.group_id = $1 AND v.gtfs_id = $2`,
    [groupId, gtfsId],
  );
}
