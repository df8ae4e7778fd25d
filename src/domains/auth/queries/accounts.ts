/**
 * What auth reads of the accounts and their memberships (users' tables), read-only: a read model
 * of the login, the API keys and the access hook. Auth does not call users' service for them:
 * users depends on auth (passwords, bounds), and the two would depend on each other
 * (test/platform/domain-deps.test.ts). Listed in FOREIGN_READS of test/platform/owners.test.ts.
 */
import type { Queryable } from '../../../platform/db/index.js';
import type { Role } from '../../../platform/http/access.js';

export interface LoginAccountRow {
  user_id: string;
  email: string;
  password_hash: string | null;
  superuser: boolean;
}

/** The account of a login's email, whatever its case. */
export async function selectLoginAccount(db: Queryable, email: string): Promise<LoginAccountRow | undefined> {
  return (await db.query<LoginAccountRow>('SELECT user_id, email, password_hash, superuser FROM users WHERE lower(email) = lower($1)', [email]))[0];
}

/** Whether the account is a superuser; undefined when there is no such account. */
export async function selectAccountSuperuser(db: Queryable, userId: string | undefined): Promise<{ superuser: boolean } | undefined> {
  return (await db.query<{ superuser: boolean }>('SELECT superuser FROM users WHERE user_id = $1', [userId]))[0];
}

export interface MembershipRow {
  role: Role;
  teams: string[];
  driver_id: string | null;
}

/** The account's membership of the group, or null. */
export async function selectMembership(db: Queryable, groupId: string, userId: string): Promise<MembershipRow | null> {
  return (await db.query<MembershipRow>('SELECT role, teams, driver_id FROM memberships WHERE group_id = $1 AND user_id = $2', [groupId, userId]))[0] ?? null;
}

/** The teams of the account's membership of the group; undefined when it holds no role there. */
export async function selectMembershipTeams(db: Queryable, groupId: string, userId: string | undefined): Promise<{ teams: string[] } | undefined> {
  return (await db.query<{ teams: string[] }>('SELECT teams FROM memberships WHERE group_id = $1 AND user_id = $2', [groupId, userId]))[0];
}

/** The first, by id, of these groups the account holds a role in; undefined when none. */
export async function selectFirstMembershipGroup(db: Queryable, userId: string, groupIds: readonly string[]): Promise<{ group_id: string } | undefined> {
  return (await db.query<{ group_id: string }>('SELECT group_id FROM memberships WHERE user_id = $1 AND group_id = ANY($2) ORDER BY group_id LIMIT 1', [userId, [...groupIds]]))[0];
}
