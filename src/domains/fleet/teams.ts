import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { forbiddenDifferentTeam, requireWritableTeams, teamsVisible } from '../../platform/http/teams.js';
import { checkKnownTeams } from '../groups/service.js';

/**
 * The team rules of a resource write (platform/http/teams.ts): the caller may write the record as
 * it is (`current`, absent on a create) and as it will be (`next`, absent when the write keeps the
 * teams: 403 ForbiddenDifferentTeam), and every team of `next` exists in the group (422 on `field`).
 */
export async function checkTeamsWrite(
  db: Queryable,
  scope: GroupScope,
  what: string,
  o: { current?: readonly (string | null)[]; next?: readonly string[] | undefined; field?: string },
): Promise<void> {
  if (o.current) requireWritableTeams(scope, o.current, what);
  if (o.next) {
    requireWritableTeams(scope, o.next, what);
    await checkKnownTeams(db, scope.groupId, o.next, ['body', o.field ?? 'teams']);
  }
}

/** A single team column (devices, depots) as a list of teams. */
export const teamsOf = (teamId: string | null | undefined): string[] => (teamId ? [teamId] : []);

/** The drivers, vehicles and devices a read names (in its path or as query filters). */
export interface NamedRecords {
  driver_id?: string | undefined;
  vehicle_id?: string | undefined;
  device_id?: string | undefined;
}

/**
 * A read keyed by a driver, vehicle or device answers as the read of that record does
 * (platform/http/teams.ts): 403 ForbiddenDifferentTeam when the record exists outside the caller's
 * teams, whether it is named in the path or as a query filter. An unknown id is left to the read
 * (a filter naming nothing keeps nothing). One query, none for a caller with the whole group.
 */
export async function requireVisibleRecords(db: Queryable, scope: GroupScope, named: NamedRecords): Promise<void> {
  if (scope.teams === null || (!named.driver_id && !named.vehicle_id && !named.device_id)) return;
  const rows = await db.query<{ what: string; id: string; teams: (string | null)[] }>(
    `SELECT 'Driver' AS what, driver_id AS id, teams FROM drivers WHERE group_id = $1 AND driver_id = $2
     UNION ALL SELECT 'Vehicle', vehicle_id, teams FROM vehicles WHERE group_id = $1 AND vehicle_id = $3
     UNION ALL SELECT 'Device', device_id, ARRAY[team_id] FROM devices WHERE group_id = $1 AND device_id = $4`,
    [scope.groupId, named.driver_id?.toLowerCase() ?? null, named.vehicle_id ?? null, named.device_id ?? null],
  );
  const hidden = rows.find((r) => !teamsVisible(scope, r.teams));
  if (hidden) throw forbiddenDifferentTeam(`${hidden.what} ${hidden.id}`);
}
