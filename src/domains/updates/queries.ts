/** The trip_updates table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../platform/db/index.js';
import type { TripUpdateRecord, UpdateKind } from './schemas.js';

export interface TripUpdateRow {
  update_id: string;
  seq: number;
  kind: UpdateKind;
  trip_id: string | null;
  route_id: string | null;
  start_time: number | null;
  start_date: string;
  end_date: string;
  details: Pick<TripUpdateRecord, 'stop' | 'replacement' | 'added_stop' | 'detour'>;
  message: TripUpdateRecord['message'];
  body_hash: string;
  created_at: Date;
  created_by: string | null;
  ended_at: Date | null;
  removed_at: Date | null;
}

const COLUMNS = 'update_id, seq, kind, trip_id, route_id, start_time, start_date, end_date, details, message, body_hash, created_at, created_by, ended_at, removed_at';

export async function selectTripUpdate(db: Queryable, groupId: string, updateId: string): Promise<TripUpdateRow | null> {
  return (await db.query<TripUpdateRow>(`SELECT ${COLUMNS} FROM trip_updates WHERE group_id = $1 AND update_id = $2`, [groupId, updateId]))[0] ?? null;
}

/** The new update, or null when the group has one of this id already. */
export async function insertTripUpdate(
  db: Queryable,
  groupId: string,
  u: Pick<TripUpdateRow, 'update_id' | 'kind' | 'trip_id' | 'route_id' | 'start_time' | 'start_date' | 'end_date' | 'message' | 'body_hash' | 'created_at' | 'created_by'> & { details: object },
): Promise<TripUpdateRow | null> {
  const rows = await db.query<TripUpdateRow>(
    `INSERT INTO trip_updates (group_id, update_id, kind, trip_id, route_id, start_time, start_date, end_date, details, message, body_hash, created_at, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (group_id, update_id) DO NOTHING RETURNING ${COLUMNS}`,
    [
      groupId, u.update_id, u.kind, u.trip_id, u.route_id, u.start_time,
      u.start_date, u.end_date, JSON.stringify(u.details), u.message ? JSON.stringify(u.message) : null,
      u.body_hash, u.created_at, u.created_by,
    ],
  );
  return rows[0] ?? null;
}

export async function updateTripUpdateEnd(db: Queryable, groupId: string, updateId: string, endDate: string, at: Date): Promise<TripUpdateRow | null> {
  return (await db.query<TripUpdateRow>(`UPDATE trip_updates SET end_date = $3, ended_at = $4 WHERE group_id = $1 AND update_id = $2 RETURNING ${COLUMNS}`, [groupId, updateId, endDate, at]))[0] ?? null;
}

/** Marks an update removed at `at`, unless it was removed before. */
export async function updateTripUpdateRemoved(db: Queryable, groupId: string, updateId: string, at: Date): Promise<TripUpdateRow | null> {
  const rows = await db.query<TripUpdateRow>(
    `UPDATE trip_updates SET removed_at = COALESCE(removed_at, $3) WHERE group_id = $1 AND update_id = $2 RETURNING ${COLUMNS}`,
    [groupId, updateId, at],
  );
  return rows[0] ?? null;
}

/**
 * The updates of the period start..end, by seq. A trip is concerned by its own updates and by
 * those of its route; a route by its own and by those of its trips (routes of trips as version
 * `gtfsId` says: gtfs_trips read for them).
 */
export function selectTripUpdates(
  db: Queryable,
  groupId: string,
  q: { start: string; end: string; tripId: string | null; routeId: string | null; kind: UpdateKind | null; includeRemoved: boolean; gtfsId: string | null },
): Promise<TripUpdateRow[]> {
  return db.query<TripUpdateRow>(
    `SELECT ${COLUMNS} FROM trip_updates u
     WHERE u.group_id = $1 AND u.start_date <= $3 AND u.end_date >= $2 AND ($7 OR u.removed_at IS NULL)
       AND ($4::text IS NULL OR u.trip_id = $4
            OR u.route_id IN (SELECT t.route_id FROM gtfs_trips t WHERE t.group_id = $1 AND t.gtfs_id = $8 AND t.trip_id = $4))
       AND ($5::text IS NULL OR u.route_id = $5
            OR u.trip_id IN (SELECT t.trip_id FROM gtfs_trips t WHERE t.group_id = $1 AND t.gtfs_id = $8 AND t.route_id = $5))
       AND ($6::text IS NULL OR u.kind = $6)
     ORDER BY u.seq`,
    [groupId, q.start, q.end, q.tripId, q.routeId, q.kind, q.includeRemoved, q.gtfsId],
  );
}

/** The updates in force on a service date for these trips or routes (all when neither is given), by seq. */
export function selectTripUpdatesInForce(db: Queryable, groupId: string, serviceDate: string, tripIds: readonly string[] | null, routeIds: readonly string[] | null): Promise<TripUpdateRow[]> {
  return db.query<TripUpdateRow>(
    `SELECT ${COLUMNS} FROM trip_updates
     WHERE group_id = $1 AND start_date <= $2 AND end_date >= $2 AND removed_at IS NULL
       AND (($3::text[] IS NULL AND $4::text[] IS NULL) OR trip_id = ANY($3::text[]) OR route_id = ANY($4::text[]))
     ORDER BY seq`,
    [groupId, serviceDate, tripIds ? [...tripIds] : null, routeIds ? [...routeIds] : null],
  );
}
