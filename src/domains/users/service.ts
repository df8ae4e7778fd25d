/** User accounts and their roles in groups (memberships). */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import { errors, invalid } from '../../platform/http/errors.js';
import type { GroupScope, Principal, Role } from '../../platform/http/access.js';
import { objectId } from '../../platform/ids.js';
import { hashPassword } from '../auth/passwords.js';
import { driverTeams } from '../fleet/drivers.js';
import { requireWithinCaller } from '../auth/bounds.js';
import { checkKnownTeams, requireGroup } from '../groups/service.js';
import type { CreateUserBody, MemberRecord, PatchUserBody, RoleRecord } from './schemas.js';

interface MemberRow {
  user_id: string;
  email: string;
  organization: string | null;
  group_id: string;
  role: Role;
  teams: string[];
  driver_id: string | null;
  created_at: Date;
}

const memberRecord = (r: MemberRow): MemberRecord => ({ ...r, created_at: r.created_at.toISOString() });

/**
 * A group sees of an account only what it holds itself: the email (how it named the account), and
 * its membership, with the organization this group recorded (item 5 of the security audit: the
 * account's own organization is never shown to another group).
 */
const MEMBER_SELECT = `SELECT u.user_id, u.email, m.organization, m.group_id, m.role, m.teams, m.driver_id, m.created_at
  FROM memberships m JOIN users u USING (user_id)`;

export async function findUserByEmail(db: Queryable, email: string) {
  return (await db.query<{ user_id: string; email: string; superuser: boolean }>('SELECT user_id, email, superuser FROM users WHERE lower(email) = lower($1)', [email]))[0] ?? null;
}

/** Creates a user account (CLI and bootstrap); returns null when the email is taken. */
export async function createUser(ctx: AppContext, input: { email: string; password: string | null; superuser?: boolean; organization?: string | null }) {
  const hash = input.password === null ? null : await hashPassword(input.password);
  const rows = await ctx.db.query<{ user_id: string; email: string }>(
    `INSERT INTO users (user_id, email, password_hash, organization, superuser, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT ((lower(email))) DO NOTHING
     RETURNING user_id, email`,
    [objectId(ctx.clock.now().getTime()), input.email, hash, input.organization ?? null, input.superuser ?? false, ctx.clock.now()],
  );
  return rows[0] ?? null;
}

/** spec-adjacent: TRANSIT_OPS_SUPERUSER_EMAIL/PASSWORD create the superuser once, at start. */
export async function bootstrapSuperuser(ctx: AppContext): Promise<'created' | 'exists' | 'not-configured'> {
  const { superuserEmail: email, superuserPassword: password } = ctx.config;
  if (!email || !password) return 'not-configured';
  const created = await createUser(ctx, { email, password, superuser: true });
  return created ? 'created' : 'exists';
}

/**
 * memberships.driver_id links a driver account to its driver record (planning and ratings read
 * it); a team-limited admin links only drivers of its teams.
 */
async function checkDriver(db: Queryable, scope: Caller, driverId: string | null | undefined) {
  if (!driverId) return;
  const driver = await driverTeams(db, scope.groupId, driverId);
  if (!driver) throw invalid(['body', 'driver_id'], `No driver ${driverId} in group ${scope.groupId}`, 'value_error', driverId);
  requireWithinCaller(scope, driver.teams, `Driver ${driverId}`);
}

type Caller = Pick<GroupScope, 'groupId' | 'teams'>;

/**
 * A team-limited admin gives roles only within its teams: the membership it makes or changes, before
 * and after, is limited to some of the admin's teams (bounds.ts).
 */
export async function addMember(ctx: AppContext, scope: Caller, input: CreateUserBody): Promise<MemberRecord & { existing_user: boolean }> {
  const groupId = scope.groupId;
  const group = await requireGroup(ctx.db, groupId);
  await checkKnownTeams(ctx.db, groupId, input.teams);
  requireWithinCaller(scope, input.teams, `A role for ${input.email}`);
  await checkDriver(ctx.db, scope, input.driver_id);
  const hash = input.password === undefined ? null : await hashPassword(input.password);
  return ctx.db.transaction(async (tx) => {
    const now = ctx.clock.now();
    let user = await findUserByEmail(tx, input.email);
    const existing = user !== null;
    if (!user) {
      if (hash === null && group.auth.provider === 'legacy') throw invalid(['body', 'password'], 'A new user of a group that logs in by password needs a password', 'missing');
      user = (await tx.query<{ user_id: string; email: string; superuser: boolean }>(
        `INSERT INTO users (user_id, email, password_hash, organization, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING user_id, email, superuser`,
        [objectId(now.getTime()), input.email, hash, input.organization ?? null, now],
      ))[0]!;
    }
    const inserted = await tx.query(
      `INSERT INTO memberships (group_id, user_id, role, teams, driver_id, organization, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (group_id, user_id) DO NOTHING RETURNING user_id`,
      [groupId, user.user_id, input.role, input.teams ?? [], input.driver_id ?? null, input.organization ?? null, now],
    );
    if (inserted.length === 0) throw errors.conflict('MembershipExists', `${input.email} already has a role in group ${groupId}; change it with PATCH`);
    const row = (await tx.query<MemberRow>(`${MEMBER_SELECT} WHERE m.group_id = $1 AND m.user_id = $2`, [groupId, user.user_id]))[0]!;
    return { ...memberRecord(row), existing_user: existing };
  });
}

export async function listMembers(db: Queryable, groupId: string): Promise<MemberRecord[]> {
  return (await db.query<MemberRow>(`${MEMBER_SELECT} WHERE m.group_id = $1 ORDER BY u.email`, [groupId])).map(memberRecord);
}

export async function updateMember(ctx: AppContext, scope: Caller, userId: string, patch: PatchUserBody): Promise<MemberRecord> {
  const groupId = scope.groupId;
  await checkKnownTeams(ctx.db, groupId, patch.teams);
  await requireMemberWithinCaller(ctx.db, scope, userId);
  if (patch.teams !== undefined) requireWithinCaller(scope, patch.teams, `User ${JSON.stringify(userId)}'s new teams`);
  await checkDriver(ctx.db, scope, patch.driver_id);
  const rows = await ctx.db.query<{ user_id: string }>(
    `UPDATE memberships SET
       role = COALESCE($3, role),
       teams = COALESCE($4, teams),
       driver_id = CASE WHEN $5 THEN $6 ELSE driver_id END,
       updated_at = $7
     WHERE group_id = $1 AND user_id = $2 RETURNING user_id`,
    [groupId, userId, patch.role ?? null, patch.teams ?? null, patch.driver_id !== undefined, patch.driver_id ?? null, ctx.clock.now()],
  );
  if (rows.length === 0) throw errors.notFound('UserNotFound', `User ${JSON.stringify(userId)} has no role in group ${JSON.stringify(groupId)}`);
  return memberRecord((await ctx.db.query<MemberRow>(`${MEMBER_SELECT} WHERE m.group_id = $1 AND m.user_id = $2`, [groupId, userId]))[0]!);
}

/** 404 when the account holds no role in the group; 403 when its role reaches beyond the caller's teams. */
async function requireMemberWithinCaller(db: Queryable, scope: Caller, userId: string): Promise<void> {
  const m = (await db.query<{ teams: string[] }>('SELECT teams FROM memberships WHERE group_id = $1 AND user_id = $2', [scope.groupId, userId]))[0];
  if (!m) throw errors.notFound('UserNotFound', `User ${JSON.stringify(userId)} has no role in group ${JSON.stringify(scope.groupId)}`);
  requireWithinCaller(scope, m.teams, `User ${JSON.stringify(userId)}`);
}

export async function removeMember(ctx: AppContext, scope: Caller, userId: string): Promise<void> {
  const groupId = scope.groupId;
  await requireMemberWithinCaller(ctx.db, scope, userId);
  const rows = await ctx.db.query('DELETE FROM memberships WHERE group_id = $1 AND user_id = $2 RETURNING user_id', [groupId, userId]);
  if (rows.length === 0) throw errors.notFound('UserNotFound', `User ${JSON.stringify(userId)} has no role in group ${JSON.stringify(groupId)}`);
}

/** spec: GET /groups/{group_id}/roles: the caller's role; for an admin, the roles of all users of the group. */
export async function rolesFor(db: Queryable, principal: Principal, scope: GroupScope): Promise<RoleRecord[]> {
  const toRole = (r: MemberRow): RoleRecord => ({ group_id: r.group_id, user_id: r.user_id, email: r.email, organization: r.organization, role: r.role, teams: r.teams });
  if (scope.role === 'admin') return (await db.query<MemberRow>(`${MEMBER_SELECT} WHERE m.group_id = $1 ORDER BY u.email`, [scope.groupId])).map(toRole);
  const own: RoleRecord = {
    group_id: scope.groupId,
    user_id: principal.userId,
    email: principal.email,
    organization: null,
    role: scope.role,
    teams: scope.teams ? [...scope.teams] : [],
  };
  if (principal.userId) {
    const org = await db.query<{ organization: string | null }>('SELECT organization FROM memberships WHERE group_id = $1 AND user_id = $2', [scope.groupId, principal.userId]);
    own.organization = org[0]?.organization ?? null;
  }
  return [own];
}
