/** Depots: where vehicles are kept and duties start; provisioning and the spec's list. */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors, invalid } from '../../platform/http/errors.js';
import { forbiddenDifferentTeam, teamParam, teamVisibleSql, teamsVisible } from '../../platform/http/teams.js';
import type { CreateDepotBody, DepotRecord, PatchDepotBody } from './schemas.js';
import { checkTeamsWrite, teamsOf } from './teams.js';

interface DepotRow {
  depot_id: string;
  name: string;
  team_id: string | null;
  address: string | null;
  latitude: number | null;
  longitude: number | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'depot_id, name, team_id, address, latitude, longitude, created_at, updated_at';
const depotRecord = (r: DepotRow): DepotRecord => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });

/** spec: GET depots: filtered by the caller's teams like every resource. */
export async function listDepots(db: Queryable, scope: GroupScope): Promise<DepotRecord[]> {
  const rows = await db.query<DepotRow>(`SELECT ${COLUMNS} FROM depots WHERE group_id = $1 AND ${teamVisibleSql('team_id', 2)} ORDER BY depot_id`, [scope.groupId, teamParam(scope)]);
  return rows.map(depotRecord);
}

function checkPosition(input: { latitude?: number | null | undefined; longitude?: number | null | undefined }) {
  if ((input.latitude === undefined) !== (input.longitude === undefined) || (input.latitude === null) !== (input.longitude === null)) {
    throw invalid(['body', input.latitude === undefined || input.latitude === null ? 'latitude' : 'longitude'], 'latitude and longitude go together: send both or neither', 'value_error');
  }
}

export async function createDepot(ctx: AppContext, scope: GroupScope, input: CreateDepotBody): Promise<DepotRecord> {
  checkPosition(input);
  await checkTeamsWrite(ctx.db, scope, 'The depot', { next: teamsOf(input.team_id), field: 'team_id' });
  const rows = await ctx.db.query<DepotRow>(
    `INSERT INTO depots (group_id, depot_id, name, team_id, address, latitude, longitude, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (group_id, depot_id) DO NOTHING RETURNING ${COLUMNS}`,
    [scope.groupId, input.depot_id, input.name, input.team_id ?? null, input.address ?? null, input.latitude ?? null, input.longitude ?? null, ctx.clock.now()],
  );
  if (!rows[0]) throw errors.conflict('DepotExists', `Depot ${JSON.stringify(input.depot_id)} already exists in group ${scope.groupId}`);
  return depotRecord(rows[0]);
}

export async function updateDepot(ctx: AppContext, scope: GroupScope, depotId: string, patch: PatchDepotBody): Promise<DepotRecord> {
  const current = (await ctx.db.query<DepotRow>(`SELECT ${COLUMNS} FROM depots WHERE group_id = $1 AND depot_id = $2`, [scope.groupId, depotId]))[0];
  if (!current) throw errors.notFound('DepotNotFound', `No depot ${JSON.stringify(depotId)} in group ${JSON.stringify(scope.groupId)}`);
  if (!teamsVisible(scope, teamsOf(current.team_id))) throw forbiddenDifferentTeam(`Depot ${depotId}`);
  checkPosition(patch);
  const next = patch.team_id === undefined ? undefined : teamsOf(patch.team_id);
  await checkTeamsWrite(ctx.db, scope, `Depot ${depotId}`, { current: teamsOf(current.team_id), next, field: 'team_id' });
  const set = (k: keyof PatchDepotBody) => patch[k] !== undefined;
  const rows = await ctx.db.query<DepotRow>(
    `UPDATE depots SET
       name = COALESCE($3, name),
       team_id = CASE WHEN $4 THEN $5 ELSE team_id END,
       address = CASE WHEN $6 THEN $7 ELSE address END,
       latitude = CASE WHEN $8 THEN $9::double precision ELSE latitude END,
       longitude = CASE WHEN $8 THEN $10::double precision ELSE longitude END,
       updated_at = $11
     WHERE group_id = $1 AND depot_id = $2 RETURNING ${COLUMNS}`,
    [scope.groupId, depotId, patch.name ?? null, set('team_id'), patch.team_id ?? null, set('address'), patch.address ?? null, set('latitude'), patch.latitude ?? null, patch.longitude ?? null, ctx.clock.now()],
  );
  return depotRecord(rows[0]!);
}
