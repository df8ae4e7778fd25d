/**
 * The gtfs_publications table, the append-only publication list: which version is published, and
 * the two questions asked of it. Both the GTFS services and the rail links ask them, so they live here once.
 */
import { readPerDb } from '../../../platform/cache.js';
import type { Queryable } from '../../../platform/db/index.js';

/** The gtfs_id of the version published now (published last), or null before any publication. */
export async function publishedGtfsId(db: Queryable, groupId: string): Promise<string | null> {
  const rows = await db.query<{ gtfs_id: string }>(
    'SELECT gtfs_id FROM gtfs_publications WHERE group_id = $1 ORDER BY published_at DESC, publication_id DESC LIMIT 1',
    [groupId],
  );
  return rows[0]?.gtfs_id ?? null;
}

/**
 * The gtfs_id in force on a service date: of the group's publications, the one made last on or
 * before the date, dates of publication taken in the group's time zone; before the first
 * publication, the first published version. Null when nothing was ever published.
 */
export function versionInForce(db: Queryable, groupId: string, serviceDate: string): Promise<string | null> {
  return versionsInForce(db, `${groupId}\n${serviceDate}`, () => selectVersionInForce(db, groupId, serviceDate));
}

/**
 * The version in force by group and date, per database handle, kept exact by the change feed: a
 * trip object asks it several times (its schedule, its recomputation, its prediction), and it
 * changes only with a publication (or the group's time zone). The TTL only bounds a lost notification.
 */
const versionsInForce = readPerDb<string | null>({ only: ['gtfs_publications', 'groups'] }, 60_000);

async function selectVersionInForce(db: Queryable, groupId: string, serviceDate: string): Promise<string | null> {
  const rows = await db.query<{ gtfs_id: string }>(
    `(SELECT p.gtfs_id, 0 AS rank FROM gtfs_publications p JOIN groups g USING (group_id)
      WHERE p.group_id = $1 AND (p.published_at AT TIME ZONE g.timezone)::date <= $2::date
      ORDER BY p.published_at DESC, p.publication_id DESC LIMIT 1)
     UNION ALL
     (SELECT gtfs_id, 1 AS rank FROM gtfs_publications WHERE group_id = $1 ORDER BY published_at, publication_id LIMIT 1)
     ORDER BY rank LIMIT 1`,
    [groupId, serviceDate],
  );
  return rows[0]?.gtfs_id ?? null;
}

export async function insertPublication(tx: Queryable, groupId: string, gtfsId: string, at: Date, by: string | null): Promise<void> {
  await tx.query('INSERT INTO gtfs_publications (group_id, gtfs_id, published_at, published_by) VALUES ($1, $2, $3, $4)', [groupId, gtfsId, at, by]);
}
