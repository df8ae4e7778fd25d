/** Groups (networks) and their teams. */
import type { AppContext } from '../../platform/context.js';
import { readPerDb } from '../../platform/cache.js';
import type { Queryable } from '../../platform/db/index.js';
import { errors, invalid } from '../../platform/http/errors.js';
import type { GroupScope } from '../../platform/http/access.js';
import type { CreateGroupBody, GroupAuth, GroupRecord, PatchGroupBody, TeamRecord } from './schemas.js';
import { checkOidcDomain } from '../../platform/http/hosts.js';
import { widerThanCaller } from '../../platform/http/bounds.js';
import {
  countGroups, insertGroup, selectAllGroups, selectDelegatedGroups, selectGroup, selectGroupAuthsOfUser, selectGroupIds, selectGroupsByIds, selectGroupsOfUser,
  updateGroupRow, type GroupRow,
} from './queries/groups.js';
import { insertTeam, selectTeamIds, selectTeams } from './queries/teams.js';

export type Group = GroupRow;

/**
 * Groups as read, per database handle, kept exact by the change feed (platform/cache.ts): a group
 * is read by nearly every request (its time zone, features, sign-in), several times by a trip
 * object, and changes a few times in its life. The TTL only bounds a lost notification.
 */
const groupsRead = readPerDb<Readonly<Group> | null>({ only: ['groups'] }, 60_000);

/** The group, or null. Outside a transaction, from the instance's cache while the groups table has not changed (frozen: shared by its readers). */
export function getGroup(db: Queryable, groupId: string): Promise<Readonly<Group> | null> {
  return groupsRead(db, groupId, async () => {
    const g = await selectGroup(db, groupId);
    return g && Object.freeze(g);
  });
}

/** How many groups the database holds (the demo starts on an empty one). */
export function groupCount(db: Queryable): Promise<number> {
  return countGroups(db);
}

export async function requireGroup(db: Queryable, groupId: string): Promise<Group> {
  const g = await getGroup(db, groupId);
  if (!g) throw errors.groupNotFound(groupId);
  return g;
}

/** The ids of `groupIds` that exist. */
export function existingGroupIds(db: Queryable, groupIds: readonly string[]): Promise<string[]> {
  return selectGroupIds(db, groupIds);
}

/** The groups that log in through an OpenID Connect provider (auth0). */
export function delegatedGroups(db: Queryable): Promise<Group[]> {
  return selectDelegatedGroups(db);
}

/** How each group the user holds a role in logs in. */
export function groupAuthsOf(db: Queryable, userId: string): Promise<Pick<Group, 'group_id' | 'auth'>[]> {
  return selectGroupAuthsOfUser(db, userId);
}

export function groupRecord(g: Group): GroupRecord {
  return { ...g, created_at: g.created_at.toISOString(), updated_at: g.updated_at.toISOString() };
}

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

async function checkGroupInput(ctx: AppContext, input: { timezone?: string | undefined; auth?: GroupAuth | undefined }) {
  if (input.timezone !== undefined && !isValidTimezone(input.timezone)) {
    throw invalid(['body', 'timezone'], `Unknown IANA time zone ${JSON.stringify(input.timezone)}`, 'value_error', input.timezone);
  }
  if (input.auth?.provider === 'auth0') {
    const problem = checkOidcDomain(input.auth.domain, ctx.config.oidcAllowPrivateHosts);
    if (problem) throw invalid(['body', 'auth', 'domain'], problem, 'value_error', input.auth.domain);
  }
}

export async function createGroup(ctx: AppContext, input: CreateGroupBody): Promise<Group> {
  await checkGroupInput(ctx, input);
  const group = await insertGroup(
    ctx.db,
    { group_id: input.group_id, name: input.name, features: input.features ?? [], auth: input.auth ?? { provider: 'legacy' }, timezone: input.timezone ?? 'UTC' },
    ctx.clock.now(),
  );
  if (!group) throw errors.conflict('GroupExists', `Group ${JSON.stringify(input.group_id)} already exists`);
  return group;
}

export async function updateGroup(ctx: AppContext, groupId: string, patch: PatchGroupBody): Promise<Group> {
  await checkGroupInput(ctx, patch);
  const group = await updateGroupRow(
    ctx.db,
    groupId,
    { name: patch.name ?? null, features: patch.features ?? null, auth: patch.auth ?? null, timezone: patch.timezone ?? null },
    ctx.clock.now(),
  );
  if (!group) throw errors.groupNotFound(groupId);
  return group;
}

/** A superuser sees every group; anyone else, the groups they hold a role in (or their key names). */
export async function listGroupsFor(db: Queryable, who: { userId: string | null; superuser: boolean; groupIds: readonly string[] | null }): Promise<Group[]> {
  if (who.superuser && who.groupIds === null) return selectAllGroups(db);
  if (who.userId === null) return selectGroupsByIds(db, who.groupIds ?? []);
  return selectGroupsOfUser(db, who.userId, who.groupIds, who.superuser);
}

/** A team-limited admin cannot make a team: a new team lies outside its teams by definition. */
export async function createTeam(ctx: AppContext, scope: Pick<GroupScope, 'groupId' | 'teams'>, input: { team_id: string; name: string }): Promise<TeamRecord> {
  if (scope.teams !== null) throw widerThanCaller(`Team ${JSON.stringify(input.team_id)}`, scope.teams);
  const groupId = scope.groupId;
  const team = await insertTeam(ctx.db, groupId, input, ctx.clock.now());
  if (!team) throw errors.conflict('TeamExists', `Team ${JSON.stringify(input.team_id)} already exists in group ${JSON.stringify(groupId)}`);
  return teamRecord(team);
}

export async function listTeams(db: Queryable, groupId: string): Promise<TeamRecord[]> {
  return (await selectTeams(db, groupId)).map(teamRecord);
}

function teamRecord(r: { group_id: string; team_id: string; name: string; created_at: Date | string }): TeamRecord {
  return { group_id: r.group_id, team_id: r.team_id, name: r.name, created_at: new Date(r.created_at).toISOString() };
}

/** Names the teams of `teams` that the group does not have (for clear errors on writes). */
export async function unknownTeams(db: Queryable, groupId: string, teams: readonly string[]): Promise<string[]> {
  if (teams.length === 0) return [];
  const known = new Set(await selectTeamIds(db, groupId, teams));
  return teams.filter((t) => !known.has(t));
}

/** 422 naming the field when `teams` holds a team the group does not have. */
export async function checkKnownTeams(db: Queryable, groupId: string, teams: readonly (string | null)[] | undefined, loc: (string | number)[] = ['body', 'teams']) {
  const unknown = await unknownTeams(db, groupId, (teams ?? []).filter((t): t is string => t !== null));
  if (unknown.length > 0) throw invalid(loc, `Unknown teams in group ${groupId}: ${unknown.join(', ')}`, 'value_error', unknown);
}
