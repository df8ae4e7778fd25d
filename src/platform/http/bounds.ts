/**
 * The one rule of delegation (docs/security.md): no credential, account or membership that a
 * caller creates or changes carries more than the caller holds, in the group of the path, within
 * the caller's teams. Every write that makes or changes a principal (API keys, memberships,
 * teams) asks these functions; the access hook bounds each API key by its creator at every
 * request (authorizeGroup), so a key also loses what its creator loses.
 *
 * Teams: null is the whole group; a list limits to those teams. An empty list written by a client
 * means the whole group too, so it is "wider" than any list.
 */
import { fail } from './errors.js';
import type { GroupScope, Principal, Scope } from './access.js';

type Teams = readonly string[] | null;

/** null (the whole group) for an empty list, as the tables store it. */
export function teamsOrWhole(teams: readonly string[] | null | undefined): Teams {
  return teams && teams.length > 0 ? teams : null;
}

/** Whether `inner` is within `outer` (null = whole group). */
export function teamsWithin(inner: Teams, outer: Teams): boolean {
  if (outer === null) return true;
  if (inner === null) return false;
  return inner.every((t) => outer.includes(t));
}

/** The teams both bounds allow: null when neither limits; possibly empty when they share none. */
export function intersectTeams(a: Teams, b: Teams): Teams {
  if (a === null) return b;
  if (b === null) return a;
  return a.filter((t) => b.includes(t));
}

export const widerThanCaller = (what: string, caller: Teams) =>
  fail('ForbiddenDifferentTeam', `${what} reaches beyond your teams (${(caller ?? []).join(', ')}): you are limited to them, and what you create or change must be too`);

/**
 * A team-limited caller may only create or change what lies within its teams: `teams` are the
 * teams of the principal, key or record (null or [] = the whole group, which is wider).
 */
export function requireWithinCaller(caller: Pick<GroupScope, 'teams'>, teams: readonly string[] | null | undefined, what: string): void {
  if (!teamsWithin(teamsOrWhole(teams), caller.teams)) throw widerThanCaller(what, caller.teams);
}

/**
 * The teams of a key a caller makes: absent = the caller's own teams (the whole group for an
 * unrestricted caller); given = checked within the caller's.
 */
export function keyTeams(caller: Pick<GroupScope, 'teams'>, asked: readonly string[] | undefined): string[] {
  if (asked === undefined) return caller.teams ? [...caller.teams] : [];
  requireWithinCaller(caller, asked, asked.length === 0 ? 'A key for the whole group' : `A key limited to ${asked.join(', ')}`);
  return [...asked];
}

/**
 * The scopes of a key made from a scoped session: absent = the session's scopes; given = within
 * them. An unscoped session may give any scopes.
 */
export function keyScopes(creator: Pick<Principal, 'scopes'>, asked: readonly Scope[] | undefined): Scope[] | null {
  if (creator.scopes === null) return asked ? [...asked] : null;
  if (asked === undefined) return [...creator.scopes];
  const beyond = asked.filter((s) => !creator.scopes!.includes(s));
  if (beyond.length > 0) {
    throw fail('ScopeNotAllowed', `Your session is limited to the scopes ${creator.scopes.join(', ')}; a key you make cannot have ${beyond.join(', ')}`);
  }
  return [...asked];
}
