/** Groups (networks) and their teams. */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import { errors, invalid } from '../../platform/http/errors.js';
import type { Feature, GroupScope } from '../../platform/http/access.js';
import type { CreateGroupBody, GroupAuth, GroupRecord, PatchGroupBody, TeamRecord } from './schemas.js';
import { checkOidcDomain } from '../auth/oidc.js';
import { widerThanCaller } from '../auth/bounds.js';

export interface Group {
  group_id: string;
  name: string;
  features: Feature[];
  auth: GroupAuth;
  timezone: string;
  created_at: Date;
  updated_at: Date;
}

const GROUP_COLUMNS = 'group_id, name, features, auth, timezone, created_at, updated_at';

export async function getGroup(db: Queryable, groupId: string): Promise<Group | null> {
  const rows = await db.query<Group>(`SELECT ${GROUP_COLUMNS} FROM groups WHERE group_id = $1`, [groupId]);
  return rows[0] ?? null;
}

export async function requireGroup(db: Queryable, groupId: string): Promise<Group> {
  const g = await getGroup(db, groupId);
  if (!g) throw errors.groupNotFound(groupId);
  return g;
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
  const rows = await ctx.db.query<Group>(
    `INSERT INTO groups (group_id, name, features, auth, timezone, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (group_id) DO NOTHING
     RETURNING ${GROUP_COLUMNS}`,
    [input.group_id, input.name, input.features ?? [], JSON.stringify(input.auth ?? { provider: 'legacy' }), input.timezone ?? 'UTC', ctx.clock.now()],
  );
  if (!rows[0]) throw errors.conflict('GroupExists', `Group ${JSON.stringify(input.group_id)} already exists`);
  return rows[0];
}

export async function updateGroup(ctx: AppContext, groupId: string, patch: PatchGroupBody): Promise<Group> {
  await checkGroupInput(ctx, patch);
  const rows = await ctx.db.query<Group>(
    `UPDATE groups SET
       name = COALESCE($2, name),
       features = COALESCE($3, features),
       auth = COALESCE($4::jsonb, auth),
       timezone = COALESCE($5, timezone),
       updated_at = $6
     WHERE group_id = $1
     RETURNING ${GROUP_COLUMNS}`,
    [groupId, patch.name ?? null, patch.features ?? null, patch.auth ? JSON.stringify(patch.auth) : null, patch.timezone ?? null, ctx.clock.now()],
  );
  if (!rows[0]) throw errors.groupNotFound(groupId);
  return rows[0];
}

/** A superuser sees every group; anyone else, the groups they hold a role in (or their key names). */
export async function listGroupsFor(db: Queryable, who: { userId: string | null; superuser: boolean; groupIds: readonly string[] | null }): Promise<Group[]> {
  if (who.superuser && who.groupIds === null) return db.query<Group>(`SELECT ${GROUP_COLUMNS} FROM groups ORDER BY group_id`);
  if (who.userId === null) return db.query<Group>(`SELECT ${GROUP_COLUMNS} FROM groups WHERE group_id = ANY($1) ORDER BY group_id`, [who.groupIds ?? []]);
  return db.query<Group>(
    `SELECT ${GROUP_COLUMNS} FROM groups g
     WHERE (EXISTS (SELECT 1 FROM memberships m WHERE m.group_id = g.group_id AND m.user_id = $1) OR $3)
       AND ($2::text[] IS NULL OR g.group_id = ANY($2))
     ORDER BY group_id`,
    [who.userId, who.groupIds, who.superuser],
  );
}

/** A team-limited admin cannot make a team: a new team lies outside its teams by definition. */
export async function createTeam(ctx: AppContext, scope: Pick<GroupScope, 'groupId' | 'teams'>, input: { team_id: string; name: string }): Promise<TeamRecord> {
  if (scope.teams !== null) throw widerThanCaller(`Team ${JSON.stringify(input.team_id)}`, scope.teams);
  const groupId = scope.groupId;
  const rows = await ctx.db.query<TeamRecord & { created_at: Date }>(
    `INSERT INTO teams (group_id, team_id, name, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (group_id, team_id) DO NOTHING
     RETURNING group_id, team_id, name, created_at`,
    [groupId, input.team_id, input.name, ctx.clock.now()],
  );
  if (!rows[0]) throw errors.conflict('TeamExists', `Team ${JSON.stringify(input.team_id)} already exists in group ${JSON.stringify(groupId)}`);
  return teamRecord(rows[0]);
}

export async function listTeams(db: Queryable, groupId: string): Promise<TeamRecord[]> {
  const rows = await db.query<TeamRecord & { created_at: Date }>('SELECT group_id, team_id, name, created_at FROM teams WHERE group_id = $1 ORDER BY team_id', [groupId]);
  return rows.map(teamRecord);
}

function teamRecord(r: { group_id: string; team_id: string; name: string; created_at: Date | string }): TeamRecord {
  return { group_id: r.group_id, team_id: r.team_id, name: r.name, created_at: new Date(r.created_at).toISOString() };
}

/** Names the teams of `teams` that the group does not have (for clear errors on writes). */
export async function unknownTeams(db: Queryable, groupId: string, teams: readonly string[]): Promise<string[]> {
  if (teams.length === 0) return [];
  const rows = await db.query<{ team_id: string }>('SELECT team_id FROM teams WHERE group_id = $1 AND team_id = ANY($2)', [groupId, [...teams]]);
  const known = new Set(rows.map((r) => r.team_id));
  return teams.filter((t) => !known.has(t));
}

/** 422 naming the field when `teams` holds a team the group does not have. */
export async function checkKnownTeams(db: Queryable, groupId: string, teams: readonly (string | null)[] | undefined, loc: (string | number)[] = ['body', 'teams']) {
  const unknown = await unknownTeams(db, groupId, (teams ?? []).filter((t): t is string => t !== null));
  if (unknown.length > 0) throw invalid(loc, `Unknown teams in group ${groupId}: ${unknown.join(', ')}`, 'value_error', unknown);
}
