/** The groups table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';
import type { Feature } from '../../../platform/http/access.js';
import type { GroupAuth } from '../schemas.js';

export interface GroupRow {
  group_id: string;
  name: string;
  features: Feature[];
  auth: GroupAuth;
  timezone: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'group_id, name, features, auth, timezone, created_at, updated_at';

export async function selectGroup(db: Queryable, groupId: string): Promise<GroupRow | null> {
  return (await db.query<GroupRow>(`SELECT ${COLUMNS} FROM groups WHERE group_id = $1`, [groupId]))[0] ?? null;
}

export async function countGroups(db: Queryable): Promise<number> {
  return (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM groups'))[0]!.n;
}

/** The new group, or null when its id is taken. */
export async function insertGroup(db: Queryable, g: Omit<GroupRow, 'created_at' | 'updated_at'>, now: Date): Promise<GroupRow | null> {
  const rows = await db.query<GroupRow>(
    `INSERT INTO groups (group_id, name, features, auth, timezone, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (group_id) DO NOTHING
     RETURNING ${COLUMNS}`,
    [g.group_id, g.name, g.features, JSON.stringify(g.auth), g.timezone, now],
  );
  return rows[0] ?? null;
}

/** A patch: a null field is left as it is. */
export interface GroupPatch {
  name: string | null;
  features: Feature[] | null;
  auth: GroupAuth | null;
  timezone: string | null;
}

/** The patched group, or null when there is none of this id. */
export async function updateGroupRow(db: Queryable, groupId: string, p: GroupPatch, now: Date): Promise<GroupRow | null> {
  const rows = await db.query<GroupRow>(
    `UPDATE groups SET
       name = COALESCE($2, name),
       features = COALESCE($3, features),
       auth = COALESCE($4::jsonb, auth),
       timezone = COALESCE($5, timezone),
       updated_at = $6
     WHERE group_id = $1
     RETURNING ${COLUMNS}`,
    [groupId, p.name, p.features, p.auth ? JSON.stringify(p.auth) : null, p.timezone, now],
  );
  return rows[0] ?? null;
}

export function selectAllGroups(db: Queryable): Promise<GroupRow[]> {
  return db.query<GroupRow>(`SELECT ${COLUMNS} FROM groups ORDER BY group_id`);
}

export function selectGroupsByIds(db: Queryable, groupIds: readonly string[]): Promise<GroupRow[]> {
  return db.query<GroupRow>(`SELECT ${COLUMNS} FROM groups WHERE group_id = ANY($1) ORDER BY group_id`, [[...groupIds]]);
}

/**
 * The groups the user holds a role in (every group when `all`), of `groupIds` when not null. A read
 * model: it reads the user's memberships (users' table) in the same statement.
 */
export function selectGroupsOfUser(db: Queryable, userId: string, groupIds: readonly string[] | null, all: boolean): Promise<GroupRow[]> {
  return db.query<GroupRow>(
    `SELECT ${COLUMNS} FROM groups g
     WHERE (EXISTS (SELECT 1 FROM memberships m WHERE m.group_id = g.group_id AND m.user_id = $1) OR $3)
       AND ($2::text[] IS NULL OR g.group_id = ANY($2))
     ORDER BY group_id`,
    [userId, groupIds === null ? null : [...groupIds], all],
  );
}

/** The ids of `groupIds` that exist. */
export async function selectGroupIds(db: Queryable, groupIds: readonly string[]): Promise<string[]> {
  return (await db.query<{ group_id: string }>('SELECT group_id FROM groups WHERE group_id = ANY($1)', [[...groupIds]])).map((r) => r.group_id);
}

/** The groups that delegate their logins to an OpenID Connect provider. */
export function selectDelegatedGroups(db: Queryable): Promise<GroupRow[]> {
  return db.query<GroupRow>("SELECT group_id, name, features, auth, timezone, created_at, updated_at FROM groups WHERE auth->>'provider' = 'auth0'");
}

/** How each group the user holds a role in logs in. A read model: it reads the user's memberships (users' table). */
export function selectGroupAuthsOfUser(db: Queryable, userId: string): Promise<Pick<GroupRow, 'group_id' | 'auth'>[]> {
  return db.query<Pick<GroupRow, 'group_id' | 'auth'>>('SELECT g.group_id, g.auth FROM memberships m JOIN groups g USING (group_id) WHERE m.user_id = $1', [userId]);
}
