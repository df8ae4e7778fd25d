import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { OFFICE, groupRoles } from '../../../platform/http/access.js';
import { DateEither, GroupId, GroupParams } from '../../../platform/http/params.js';
import { PeriodQuery } from '../../../platform/http/periods.js';
import { PUBLIC, op } from '../../../platform/http/route.js';
import { component, ref } from '../../../platform/http/components.js';
import type { CodeOf } from '../../../platform/http/error-codes.js';
import { TEAM_EMBED_NOTE } from '../../../platform/http/teams.js';
import { MAX_MOVEMENT_PERIOD_DAYS, VehicleMovementRecord, anyMovement, getMovement, movementsOfDate, movementsOfPeriod } from './service.js';

const access = (roleError: CodeOf<403>) => groupRoles(OFFICE, roleError, 'read');
const BlockParams = Type.Object({ group_id: GroupId, block_id: Type.String({ minLength: 1, maxLength: 255 }) });
const DateQuery = Type.Object({ date: DateEither('The service date (YYYY-MM-DD or YYYYMMDD).') });
const List = Type.Array(ref(VehicleMovementRecord));
const MovementsExist = component('VehicleMovementsExist', Type.Object({ any: Type.Boolean({ description: 'true when the group holds at least one movement, of any date.' }) }, { additionalProperties: false, description: 'Whether the group holds any vehicle movement at all.' }));
const teamNote = `A caller limited to teams sees the movements made during the duties they see (driver or vehicle in one of their teams); a block belongs to no team, its movements are filtered so. ${TEAM_EMBED_NOTE}`;
const bothSpellings = `Both spellings are served: vehicle-movements (hyphen) and vehicle_movements (underscore).\n\n${teamNote}`;

/** spec: the vehicle movement paths appear hyphenated and underscored; both are served. */
export async function movementRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  const blockOfDate = {
    params: BlockParams, querystring: DateQuery, response: { 200: List },
  };
  app.get('/groups/:group_id/blocks/:block_id/vehicle-movements', {
    schema: op({ operationId: 'listBlockVehicleMovements', summary: 'Movements outside commercial service of a block on a day', description: bothSpellings, tags: ['vehicle-movements'], access: access('ListBlockVehicleMovementsRoleRequired'), documents: PUBLIC }, blockOfDate),
  }, async (req) => movementsOfDate(ctx.db, req.groupScope!, req.query.date, req.params.block_id));

  app.get('/groups/:group_id/blocks/:block_id/vehicle_movements', {
    schema: op({ operationId: 'listBlockVehicleMovementsUnderscored', summary: 'Movements of a block on a day (underscored spelling)', description: bothSpellings, tags: ['vehicle-movements'], access: access('ListBlockVehicleMovementsRoleRequired'), documents: PUBLIC }, blockOfDate),
  }, async (req) => movementsOfDate(ctx.db, req.groupScope!, req.query.date, req.params.block_id));

  app.get('/groups/:group_id/vehicle-movements', {
    schema: op(
      { operationId: 'listVehicleMovements', summary: 'All movements outside commercial service of a day', description: teamNote, tags: ['vehicle-movements'], access: access('ListVehicleMovementsRoleRequired'), documents: PUBLIC },
      { params: GroupParams, querystring: DateQuery, response: { 200: List } },
    ),
  }, async (req) => movementsOfDate(ctx.db, req.groupScope!, req.query.date));

  app.get('/groups/:group_id/vehicle-movements/any', {
    schema: op(
      {
        operationId: 'anyVehicleMovements', summary: 'Whether the group holds any movement at all', tags: ['vehicle-movements'], access: access('AnyVehicleMovementsRoleRequired'), documents: PUBLIC,
        description: 'Tells an empty result from a feature the group never fed.',
      },
      { params: GroupParams, response: { 200: ref(MovementsExist) } },
    ),
  }, async (req) => anyMovement(ctx.db, req.params.group_id));

  app.get('/groups/:group_id/vehicle-movements/:vehicle_movement_id', {
    schema: op(
      {
        operationId: 'getVehicleMovement', summary: 'One vehicle movement', tags: ['vehicle-movements'], access: access('GetVehicleMovementRoleRequired'), documents: PUBLIC, description: teamNote,
        errors: { 404: { VehicleMovementNotFound: 'unknown movement' }, 403: { ForbiddenDifferentTeam: 'the movement belongs to other teams' } },
      },
      { params: Type.Object({ group_id: GroupId, vehicle_movement_id: Type.String({ minLength: 1, maxLength: 64 }) }), response: { 200: ref(VehicleMovementRecord) } },
    ),
  }, async (req) => getMovement(ctx.db, req.groupScope!, req.params.vehicle_movement_id));

  app.get('/groups/:group_id/vehicle_movements', {
    schema: op(
      {
        operationId: 'listVehicleMovementsOverPeriod', summary: 'Vehicle movements over a period', tags: ['vehicle-movements'], access: access('ListVehicleMovementsOverPeriodRoleRequired'), documents: PUBLIC,
        description: `Service dates from start_date to end_date, both included, at most ${MAX_MOVEMENT_PERIOD_DAYS} days (not paged).\n\n${teamNote}`,
      },
      { params: GroupParams, querystring: Type.Object({ ...PeriodQuery }), response: { 200: List } },
    ),
  }, async (req) => movementsOfPeriod(ctx.db, req.groupScope!, req.query.start_date, req.query.end_date));
}
