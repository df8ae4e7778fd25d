/**
 * GTFS versions, their publication, and their calendars.
 *
 * Publication is append-only (gtfs_publications): the published GTFS now is the one published
 * last; the version in force on a service date is read from the same list (service-days.ts).
 */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import { errors, fail } from '../../platform/http/errors.js';
import { selectCalendars, type CalendarRow } from './queries/calendars.js';
import { insertPublication, publishedGtfsId } from './queries/publications.js';
import { selectVersion, selectVersions, versionExists, type VersionRow } from './queries/versions.js';
import { refreshOrphans } from './rail/service.js';
import type { CalendarRecord, GtfsVersionRecord } from './schemas.js';
import { addDays } from '../../platform/time.js';
import { isoWeekday } from './time.js';

export { publishedGtfsId };

/** The path alias of the version published now. */
export const PUBLISHED_ALIAS = 'published';

function versionRecord(r: VersionRow, published: string | null): GtfsVersionRecord {
  return {
    id: r.gtfs_id,
    name: r.name,
    status: r.gtfs_id === published ? 'published' : r.publication_date ? 'superseded' : 'imported',
    publication_date: r.publication_date?.toISOString() ?? null,
    imported_at: r.imported_at.toISOString(),
    counts: r.counts,
    warning_count: r.warning_count,
    feed_info: r.feed_info,
  };
}

export async function listVersions(db: Queryable, groupId: string): Promise<GtfsVersionRecord[]> {
  const rows = await selectVersions(db, groupId);
  const published = await publishedGtfsId(db, groupId);
  return rows.map((r) => versionRecord(r, published));
}

/** A version of the group by id (or `published`), or null. */
export async function findVersion(db: Queryable, groupId: string, gtfsId: string): Promise<GtfsVersionRecord | null> {
  const published = await publishedGtfsId(db, groupId);
  const id = gtfsId === PUBLISHED_ALIAS ? published : gtfsId;
  if (id === null) return null;
  const row = await selectVersion(db, groupId, id);
  return row ? versionRecord(row, published) : null;
}

const gtfsNotFound = (gtfsId: string) => errors.notFound('GtfsNotFound', `GTFS version ${JSON.stringify(gtfsId)} does not exist in this group`);

export async function requireVersion(db: Queryable, groupId: string, gtfsId: string): Promise<GtfsVersionRecord> {
  const v = await findVersion(db, groupId, gtfsId);
  if (!v) throw gtfsNotFound(gtfsId);
  return v;
}

/**
 * Makes the version the group's published GTFS from `at` on, inside the caller's transaction.
 * Publications of a group are serialised (a transaction lock), so "published last" is well defined.
 */
export async function publishIn(tx: Queryable, at: Date, groupId: string, gtfsId: string, by: string | null): Promise<Date> {
  await lockPublications(tx, groupId);
  await insertPublication(tx, groupId, gtfsId, at, by);
  await refreshOrphans(tx, groupId, gtfsId);
  return at;
}

/**
 * Publishes a version (again, if it was published before: the publication list keeps the
 * earlier dates, so the versions in force on past dates do not change). Publishing the version
 * that is already published changes nothing.
 */
export async function publishGtfs(ctx: AppContext, groupId: string, gtfsId: string, by: string | null): Promise<GtfsVersionRecord> {
  await ctx.db.transaction(async (tx) => {
    await lockPublications(tx, groupId);
    if (!(await versionExists(tx, groupId, gtfsId))) throw gtfsNotFound(gtfsId);
    if ((await publishedGtfsId(tx, groupId)) === gtfsId) return;
    await publishIn(tx, ctx.clock.now(), groupId, gtfsId, by);
  });
  return requireVersion(ctx.db, groupId, gtfsId);
}

async function lockPublications(tx: Queryable, groupId: string) {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('transit-ops:gtfs-publish:' || $1))", [groupId]);
}

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

async function calendars(db: Queryable, groupId: string, gtfsId: string, serviceId: string | null): Promise<CalendarRecord[]> {
  return (await selectCalendars(db, groupId, gtfsId, serviceId)).map(calendarRecord);
}

function calendarRecord(r: CalendarRow): CalendarRecord {
  const days = r.days ?? WEEKDAYS.map(() => false);
  const removed = new Set(r.removed);
  const dates = new Set(r.added);
  if (r.start_date && r.end_date) {
    for (let d = r.start_date; d <= r.end_date; d = addDays(d, 1)) {
      if (days[isoWeekday(d) - 1]) dates.add(d);
    }
  }
  return {
    service_id: r.service_id,
    ...(Object.fromEntries(WEEKDAYS.map((w, i) => [w, days[i]!])) as Record<(typeof WEEKDAYS)[number], boolean>),
    start_date: r.start_date,
    end_date: r.end_date,
    added_dates: r.added,
    removed_dates: r.removed,
    dates: [...dates].filter((d) => !removed.has(d)).sort(),
  };
}

/** spec: Errors, 422 InvalidGTFSId on the calendars list. */
export async function listCalendars(db: Queryable, groupId: string, gtfsId: string): Promise<CalendarRecord[]> {
  const v = await findVersion(db, groupId, gtfsId);
  if (!v) throw fail('InvalidGTFSId', `GTFS version ${JSON.stringify(gtfsId)} does not exist in this group`);
  return calendars(db, groupId, v.id, null);
}

/** spec: Errors, 404 GtfsCalendarNotFound for an unknown GTFS version; an unknown service_id is null. */
export async function getCalendar(db: Queryable, groupId: string, gtfsId: string, serviceId: string): Promise<CalendarRecord | null> {
  const v = await findVersion(db, groupId, gtfsId);
  if (!v) throw errors.notFound('GtfsCalendarNotFound', `GTFS version ${JSON.stringify(gtfsId)} does not exist in this group, so it has no calendar`);
  return (await calendars(db, groupId, v.id, serviceId))[0] ?? null;
}
