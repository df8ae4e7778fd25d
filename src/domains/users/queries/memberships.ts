/** The memberships table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';
import type { Role } from '../../../platform/http/access.js';

export interface MemberRow {
  user_id: string;
  email: string;
  organization: string | null;
  group_id: string;
  role: Role;
  teams: string[];
  driver_id: string | null;
  created_at: Date;
}

/**
 * A group sees of an account only what it holds itself: the email (how it named the account), and
 * its membership, with the organization this group recorded (item 5 of the security audit: the
 * account's own organization is never shown to another group).
 */
const MEMBER_SELECT = `SELECT u.user_id, u.email, m.organization, m.group_id, m.role, m.teams, m.driver_id, m.created_at
  FROM memberships m JOIN users u USING (user_id)`;

export async function selectMember(db: Queryable, groupId: string, userId: string): Promise<MemberRow | null> {
  return (await db.query<MemberRow>(`${MEMBER_SELECT} WHERE m.group_id = $1 AND m.user_id = $2`, [groupId, userId]))[0] ?? null;
}

/** The group's members by email. */
export function selectMembers(db: Queryable, groupId: string): Promise<MemberRow[]> {
  return db.query<MemberRow>(`${MEMBER_SELECT} WHERE m.group_id = $1 ORDER BY u.email`, [groupId]);
}

export interface NewMembership {
  role: Role;
  teams: string[];
  driver_id: string | null;
  organization: string | null;
}

/** False when the account already holds a role in the group. */
export async function insertMembership(db: Queryable, groupId: string, userId: string, m: NewMembership, now: Date): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO memberships (group_id, user_id, role, teams, driver_id, organization, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (group_id, user_id) DO NOTHING RETURNING user_id`,
    [groupId, userId, m.role, m.teams, m.driver_id, m.organization, now],
  );
  return rows.length > 0;
}

/** A patch: a null field is left as it is; driver_id changes only when `setDriver` is true. */
export interface MembershipPatch {
  role: Role | null;
  teams: string[] | null;
  setDriver: boolean;
  driver_id: string | null;
}

/** False when the account holds no role in the group. */
export async function updateMembership(db: Queryable, groupId: string, userId: string, p: MembershipPatch, now: Date): Promise<boolean> {
  const rows = await db.query<{ user_id: string }>(
    `UPDATE memberships SET
       role = COALESCE($3, role),
       teams = COALESCE($4, teams),
       driver_id = CASE WHEN $5 THEN $6 ELSE driver_id END,
       updated_at = $7
     WHERE group_id = $1 AND user_id = $2 RETURNING user_id`,
    [groupId, userId, p.role, p.teams, p.setDriver, p.driver_id, now],
  );
  return rows.length > 0;
}

/** False when the account held no role in the group. */
export async function deleteMembership(db: Queryable, groupId: string, userId: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM memberships WHERE group_id = $1 AND user_id = $2 RETURNING user_id', [groupId, userId]);
  return rows.length > 0;
}

export async function selectMembershipTeams(db: Queryable, groupId: string, userId: string): Promise<string[] | null> {
  return (await db.query<{ teams: string[] }>('SELECT teams FROM memberships WHERE group_id = $1 AND user_id = $2', [groupId, userId]))[0]?.teams ?? null;
}

/** The organization the group recorded for the account; undefined when it holds no role there. */
export async function selectMembershipOrganization(db: Queryable, groupId: string, userId: string): Promise<string | null | undefined> {
  return (await db.query<{ organization: string | null }>('SELECT organization FROM memberships WHERE group_id = $1 AND user_id = $2', [groupId, userId]))[0]?.organization;
}
