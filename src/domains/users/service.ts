/** User accounts and their roles in groups (memberships). */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import { errors, invalid } from '../../platform/http/errors.js';
import type { GroupScope, Principal } from '../../platform/http/access.js';
import { objectId } from '../../platform/ids.js';
import { hashPassword } from '../auth/passwords.js';
import { driverTeams } from '../fleet/drivers.js';
import { requireWithinCaller } from '../../platform/http/bounds.js';
import { checkKnownTeams, requireGroup } from '../groups/service.js';
import type { CreateUserBody, MemberRecord, PatchUserBody, RoleRecord } from './schemas.js';
import {
  deleteMembership, insertMembership, selectMember, selectMembers, selectMembershipOrganization, selectMembershipTeams, updateMembership, type MemberRow,
} from './queries/memberships.js';
import { insertUser, insertUserUnlessTaken, selectUserByEmail } from './queries/users.js';

const memberRecord = (r: MemberRow): MemberRecord => ({ ...r, created_at: r.created_at.toISOString() });

export function findUserByEmail(db: Queryable, email: string) {
  return selectUserByEmail(db, email);
}

/** Creates a user account (CLI and bootstrap); returns null when the email is taken. */
export async function createUser(ctx: AppContext, input: { email: string; password: string | null; superuser?: boolean; organization?: string | null }) {
  const hash = input.password === null ? null : await hashPassword(input.password);
  return insertUserUnlessTaken(
    ctx.db,
    { user_id: objectId(ctx.clock.now().getTime()), email: input.email, password_hash: hash, organization: input.organization ?? null, superuser: input.superuser ?? false },
    ctx.clock.now(),
  );
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
      user = await insertUser(tx, { user_id: objectId(now.getTime()), email: input.email, password_hash: hash, organization: input.organization ?? null }, now);
    }
    const inserted = await insertMembership(
      tx,
      groupId,
      user.user_id,
      { role: input.role, teams: input.teams ?? [], driver_id: input.driver_id ?? null, organization: input.organization ?? null },
      now,
    );
    if (!inserted) throw errors.conflict('MembershipExists', `${input.email} already has a role in group ${groupId}; change it with PATCH`);
    const row = (await selectMember(tx, groupId, user.user_id))!;
    return { ...memberRecord(row), existing_user: existing };
  });
}

export async function listMembers(db: Queryable, groupId: string): Promise<MemberRecord[]> {
  return (await selectMembers(db, groupId)).map(memberRecord);
}

export async function updateMember(ctx: AppContext, scope: Caller, userId: string, patch: PatchUserBody): Promise<MemberRecord> {
  const groupId = scope.groupId;
  await checkKnownTeams(ctx.db, groupId, patch.teams);
  await requireMemberWithinCaller(ctx.db, scope, userId);
  if (patch.teams !== undefined) requireWithinCaller(scope, patch.teams, `User ${JSON.stringify(userId)}'s new teams`);
  await checkDriver(ctx.db, scope, patch.driver_id);
  const updated = await updateMembership(
    ctx.db,
    groupId,
    userId,
    { role: patch.role ?? null, teams: patch.teams ?? null, setDriver: patch.driver_id !== undefined, driver_id: patch.driver_id ?? null },
    ctx.clock.now(),
  );
  if (!updated) throw errors.notFound('UserNotFound', `User ${JSON.stringify(userId)} has no role in group ${JSON.stringify(groupId)}`);
  return memberRecord((await selectMember(ctx.db, groupId, userId))!);
}

/** 404 when the account holds no role in the group; 403 when its role reaches beyond the caller's teams. */
async function requireMemberWithinCaller(db: Queryable, scope: Caller, userId: string): Promise<void> {
  const teams = await selectMembershipTeams(db, scope.groupId, userId);
  if (!teams) throw errors.notFound('UserNotFound', `User ${JSON.stringify(userId)} has no role in group ${JSON.stringify(scope.groupId)}`);
  requireWithinCaller(scope, teams, `User ${JSON.stringify(userId)}`);
}

export async function removeMember(ctx: AppContext, scope: Caller, userId: string): Promise<void> {
  const groupId = scope.groupId;
  await requireMemberWithinCaller(ctx.db, scope, userId);
  if (!(await deleteMembership(ctx.db, groupId, userId))) throw errors.notFound('UserNotFound', `User ${JSON.stringify(userId)} has no role in group ${JSON.stringify(groupId)}`);
}

/** spec: GET /groups/{group_id}/roles: the caller's role; for an admin, the roles of all users of the group. */
export async function rolesFor(db: Queryable, principal: Principal, scope: GroupScope): Promise<RoleRecord[]> {
  const toRole = (r: MemberRow): RoleRecord => ({ group_id: r.group_id, user_id: r.user_id, email: r.email, organization: r.organization, role: r.role, teams: r.teams });
  if (scope.role === 'admin') return (await selectMembers(db, scope.groupId)).map(toRole);
  const own: RoleRecord = {
    group_id: scope.groupId,
    user_id: principal.userId,
    email: principal.email,
    organization: null,
    role: scope.role,
    teams: scope.teams ? [...scope.teams] : [],
  };
  if (principal.userId) {
    own.organization = (await selectMembershipOrganization(db, scope.groupId, principal.userId)) ?? null;
  }
  return [own];
}
