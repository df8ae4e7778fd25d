import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { requireWritableTeams } from '../../platform/http/teams.js';
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
