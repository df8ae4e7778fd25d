/** Drivers rate the driver application (score 1–5, optional comment), once per app version. */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors } from '../../platform/http/errors.js';
import { teamParam } from '../../platform/http/teams.js';
import { driverExists } from '../fleet/drivers.js';
import { selectRating, selectRatings, selectRatingsAverage, selectRatingsByDriverVersion, upsertRating, type RatingRow } from './queries.js';
import type { GroupBy, RatingBody, RatingByDriverVersion, RatingByGroup, RatingRecord } from './schemas.js';

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
  const row = await selectRating(db, caller.scope.groupId, id, driverVersion);
  return row ? ratingRecord(row) : null;
}

/** Creates the driver's rating of a version, or replaces it (created_at kept). */
export async function putDriverRating(ctx: AppContext, caller: RatingCaller, driverId: string, input: RatingBody): Promise<RatingRecord> {
  const id = await requireOwnDriver(ctx.db, caller, driverId);
  return ratingRecord(await upsertRating(ctx.db, caller.scope.groupId, { driver_id: id, driver_version: input.driver_version, score: input.score, comment: input.comment ?? null }, ctx.clock.now()));
}

/** spec: GET ratings?group_by=: the three shapes. */
export async function listRatings(db: Queryable, scope: GroupScope, groupBy: GroupBy | undefined): Promise<RatingRecord[] | RatingByDriverVersion[] | RatingByGroup[]> {
  // Ratings are seen through their drivers: a caller limited to teams sees their teams' drivers' ratings.
  const teams = teamParam(scope);
  if (groupBy === 'group') {
    const { average, count } = await selectRatingsAverage(db, scope.groupId, teams);
    return [{ group_id: scope.groupId, average, count }];
  }
  if (groupBy === 'driver_version') {
    const rows = await selectRatingsByDriverVersion(db, scope.groupId, teams);
    return rows.sort((a, b) => byVersion(a.driver_version, b.driver_version));
  }
  const rows = await selectRatings(db, scope.groupId, teams);
  return rows.sort((a, b) => byVersion(a.driver_version, b.driver_version)).map(ratingRecord);
}

/** App versions in their natural order: 4.9.0 before 4.10.0. */
const byVersion = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
