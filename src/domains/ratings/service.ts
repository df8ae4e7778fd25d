/** Drivers rate the driver application (score 1–5, optional comment), once per app version. */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors } from '../../platform/http/errors.js';
import { teamParam, teamsVisibleSql } from '../../platform/http/teams.js';
import { driverExists } from '../fleet/drivers.js';
import type { GroupBy, RatingBody, RatingByDriverVersion, RatingByGroup, RatingRecord } from './schemas.js';

interface RatingRow {
  driver_id: string;
  driver_version: string;
  score: number;
  comment: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'r.driver_id, r.driver_version, r.score, r.comment, r.created_at, r.updated_at';
const ratingRecord = (r: RatingRow): RatingRecord => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });

/** Who asks: a driver account reads and writes only the rating of the driver record it is linked to. */
export interface RatingCaller {
  scope: GroupScope;
  superuser: boolean;
}

async function requireOwnDriver(db: Queryable, caller: RatingCaller, driverId: string): Promise<string> {
  const id = driverId.toLowerCase();
  if (!caller.superuser && caller.scope.driverId !== id) {
    throw errors.forbidden(
      'ForbiddenDifferentDriver',
      caller.scope.driverId ? `A driver reads and gives only their own rating (driver ${caller.scope.driverId})` : 'Your account is not linked to a driver record: ask an admin to set your driver_id',
    );
  }
  if (!(await driverExists(db, caller.scope.groupId, id))) throw errors.notFound('DriverNotFound', `No driver ${JSON.stringify(id)} in group ${JSON.stringify(caller.scope.groupId)}`);
  return id;
}

/** spec: GET drivers/{driver_id}/ratings: the driver's rating of that version, or null. */
export async function getDriverRating(db: Queryable, caller: RatingCaller, driverId: string, driverVersion: string): Promise<RatingRecord | null> {
  const id = await requireOwnDriver(db, caller, driverId);
  const rows = await db.query<RatingRow>(`SELECT ${COLUMNS} FROM ratings r WHERE r.group_id = $1 AND r.driver_id = $2 AND r.driver_version = $3`, [caller.scope.groupId, id, driverVersion]);
  return rows[0] ? ratingRecord(rows[0]) : null;
}

/** Creates the driver's rating of a version, or replaces it (created_at kept). */
export async function putDriverRating(ctx: AppContext, caller: RatingCaller, driverId: string, input: RatingBody): Promise<RatingRecord> {
  const id = await requireOwnDriver(ctx.db, caller, driverId);
  const rows = await ctx.db.query<RatingRow>(
    `INSERT INTO ratings AS r (group_id, driver_id, driver_version, score, comment, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (group_id, driver_id, driver_version) DO UPDATE SET score = EXCLUDED.score, comment = EXCLUDED.comment, updated_at = EXCLUDED.updated_at
     RETURNING ${COLUMNS}`,
    [caller.scope.groupId, id, input.driver_version, input.score, input.comment ?? null, ctx.clock.now()],
  );
  return ratingRecord(rows[0]!);
}

// Ratings are seen through their drivers: a caller limited to teams sees their teams' drivers' ratings.
const VISIBLE = `FROM ratings r JOIN drivers d ON d.group_id = r.group_id AND d.driver_id = r.driver_id
  WHERE r.group_id = $1 AND ${teamsVisibleSql('d.teams', 2)}`;

/** spec: GET ratings?group_by=: the three shapes. */
export async function listRatings(db: Queryable, scope: GroupScope, groupBy: GroupBy | undefined): Promise<RatingRecord[] | RatingByDriverVersion[] | RatingByGroup[]> {
  const params = [scope.groupId, teamParam(scope)];
  if (groupBy === 'group') {
    const rows = await db.query<{ average: number | null; count: number }>(`SELECT round(avg(r.score), 2) AS average, count(*) AS count ${VISIBLE}`, params);
    return [{ group_id: scope.groupId, average: rows[0]!.average, count: rows[0]!.count }];
  }
  if (groupBy === 'driver_version') {
    const rows = await db.query<RatingByDriverVersion>(`SELECT r.driver_version, round(avg(r.score), 2) AS average, count(*) AS count ${VISIBLE} GROUP BY r.driver_version`, params);
    return rows.sort((a, b) => byVersion(a.driver_version, b.driver_version));
  }
  const rows = await db.query<RatingRow>(`SELECT ${COLUMNS} ${VISIBLE} ORDER BY r.driver_id`, params);
  return rows.sort((a, b) => byVersion(a.driver_version, b.driver_version)).map(ratingRecord);
}

/** App versions in their natural order: 4.9.0 before 4.10.0. */
const byVersion = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
