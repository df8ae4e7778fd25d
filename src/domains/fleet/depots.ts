/** Depots: where vehicles are kept and duties start; provisioning and the spec's list. */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors, invalid } from '../../platform/http/errors.js';
import { forbiddenDifferentTeam, teamParam, teamsVisible } from '../../platform/http/teams.js';
import { insertDepot, selectDepot, selectDepots, updateDepotRow, type DepotRow } from './queries/depots.js';
import type { CreateDepotBody, DepotRecord, PatchDepotBody } from './schemas.js';
import { checkTeamsWrite, teamsOf } from './teams.js';

const depotRecord = (r: DepotRow): DepotRecord => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });

/** spec: GET depots: filtered by the caller's teams like every resource. */
export async function listDepots(db: Queryable, scope: GroupScope): Promise<DepotRecord[]> {
  const rows = await selectDepots(db, scope.groupId, teamParam(scope));
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
  const row = await insertDepot(ctx.db, scope.groupId, {
    depot_id: input.depot_id, name: input.name, team_id: input.team_id ?? null, address: input.address ?? null, latitude: input.latitude ?? null, longitude: input.longitude ?? null,
  }, ctx.clock.now());
  if (!row) throw errors.conflict('DepotExists', `Depot ${JSON.stringify(input.depot_id)} already exists in group ${scope.groupId}`);
  return depotRecord(row);
}

export async function updateDepot(ctx: AppContext, scope: GroupScope, depotId: string, patch: PatchDepotBody): Promise<DepotRecord> {
  const current = await selectDepot(ctx.db, scope.groupId, depotId);
  if (!current) throw errors.notFound('DepotNotFound', `No depot ${JSON.stringify(depotId)} in group ${JSON.stringify(scope.groupId)}`);
  if (!teamsVisible(scope, teamsOf(current.team_id))) throw forbiddenDifferentTeam(`Depot ${depotId}`);
  checkPosition(patch);
  const next = patch.team_id === undefined ? undefined : teamsOf(patch.team_id);
  await checkTeamsWrite(ctx.db, scope, `Depot ${depotId}`, { current: teamsOf(current.team_id), next, field: 'team_id' });
  const set = (k: keyof PatchDepotBody) => patch[k] !== undefined;
  const row = await updateDepotRow(ctx.db, scope.groupId, depotId, {
    name: patch.name ?? null, setTeam: set('team_id'), team_id: patch.team_id ?? null, setAddress: set('address'), address: patch.address ?? null,
    setPosition: set('latitude'), latitude: patch.latitude ?? null, longitude: patch.longitude ?? null,
  }, ctx.clock.now());
  return depotRecord(row);
}
