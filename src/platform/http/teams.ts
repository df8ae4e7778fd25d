/**
 * Team scope (spec: What the service does 8): a caller limited to teams sees only the records
 * of those teams, in every read and export. `GroupScope.teams` is null for the whole group.
 *
 * One rule everywhere: a record is visible when one of its teams is one of the caller's; a record
 * attached to no team is visible only to callers with the whole group. A limited caller writes
 * only records all of whose teams are theirs, and cannot leave a record without a team.
 */
import type { GroupScope } from './access.js';
import { fail } from './errors.js';

type Scope = Pick<GroupScope, 'teams'>;

/** The caller's teams as a query parameter: null = no restriction. */
export function teamParam(scope: Scope): string[] | null {
  return scope.teams === null ? null : [...scope.teams];
}

/** SQL condition on a `text[]` column of teams; `$n` holds teamParam(scope). */
export function teamsVisibleSql(column: string, n: number): string {
  return `($${n}::text[] IS NULL OR ${column} && $${n}::text[])`;
}

/** SQL condition on a single team column. */
export function teamVisibleSql(column: string, n: number): string {
  return `($${n}::text[] IS NULL OR ${column} = ANY($${n}::text[]))`;
}

export function teamsVisible(scope: Scope, teams: readonly (string | null)[]): boolean {
  return scope.teams === null || teams.some((t) => t !== null && scope.teams!.includes(t));
}

export function teamsWritable(scope: Scope, teams: readonly (string | null)[]): boolean {
  return scope.teams === null || (teams.length > 0 && teams.every((t) => t !== null && scope.teams!.includes(t)));
}

export const forbiddenDifferentTeam = (what: string) =>
  fail('ForbiddenDifferentTeam', `${what} belongs to a team outside your teams`);

/** Throws 403 ForbiddenDifferentTeam unless the caller may write a record with these teams. */
export function requireWritableTeams(scope: Scope, teams: readonly (string | null)[], what: string): void {
  if (!teamsWritable(scope, teams)) {
    throw fail('ForbiddenDifferentTeam', `${what}: you are limited to the teams ${scope.teams!.join(', ')}; a record you write must belong to those teams only`);
  }
}

/** The rules of list filters and of records naming others, for operation descriptions. */
export const TEAM_FILTER_NOTE =
  'A filter only narrows what the caller sees: filtering by a driver, vehicle or device of another team keeps the records of the caller\'s teams that name it.';
export const TEAM_EMBED_NOTE =
  'A record the caller sees names the drivers, vehicles and devices it involves by id whatever their teams; their details (names, staff and fleet numbers, plates, labels, teams) only when the caller sees those records too.';
