import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { OFFICE, groupRoles } from '../../platform/http/access.js';
import { DateEither, GroupId, GroupParams } from '../../platform/http/params.js';
import { PeriodQuery } from '../../platform/http/periods.js';
import { AnyRecord, PUBLIC, notImplemented, op } from '../../platform/http/route.js';

const MOVEMENTS = 'issue #6, the device API and what it records';
const access = (name: string) => groupRoles(OFFICE, `${name}RoleRequired`, 'read');
const BlockParams = Type.Object({ group_id: GroupId, block_id: Type.String({ minLength: 1, maxLength: 255 }) });
const DateQuery = Type.Object({ date: DateEither('The service date (YYYY-MM-DD or YYYYMMDD).') });

/** spec: the vehicle movement paths appear hyphenated and underscored; both are served. */
export async function movementRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/groups/:group_id/blocks/:block_id/vehicle-movements', {
    schema: op(
      { operationId: 'listBlockVehicleMovements', summary: 'Movements outside commercial service of a block on a day', tags: ['vehicle-movements'], access: access('ListBlockVehicleMovements'), documents: PUBLIC, notImplemented: MOVEMENTS },
      { params: BlockParams, querystring: DateQuery, response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(MOVEMENTS));

  app.get('/groups/:group_id/vehicle-movements', {
    schema: op(
      { operationId: 'listVehicleMovements', summary: 'All movements outside commercial service of a day', tags: ['vehicle-movements'], access: access('ListVehicleMovements'), documents: PUBLIC, notImplemented: MOVEMENTS },
      { params: GroupParams, querystring: DateQuery, response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(MOVEMENTS));

  app.get('/groups/:group_id/vehicle-movements/any', {
    schema: op(
      { operationId: 'anyVehicleMovements', summary: 'Whether the group holds any movement at all', tags: ['vehicle-movements'], access: access('AnyVehicleMovements'), documents: PUBLIC, notImplemented: MOVEMENTS },
      { params: GroupParams, response: { 200: AnyRecord } },
    ),
  }, notImplemented(MOVEMENTS));

  app.get('/groups/:group_id/vehicle-movements/:vehicle_movement_id', {
    schema: op(
      { operationId: 'getVehicleMovement', summary: 'One vehicle movement', tags: ['vehicle-movements'], access: access('GetVehicleMovement'), documents: PUBLIC, errors: { 404: { VehicleMovementNotFound: 'unknown movement' } }, notImplemented: MOVEMENTS },
      { params: Type.Object({ group_id: GroupId, vehicle_movement_id: Type.String({ minLength: 1, maxLength: 64 }) }), response: { 200: AnyRecord } },
    ),
  }, notImplemented(MOVEMENTS));

  app.get('/groups/:group_id/vehicle_movements', {
    schema: op(
      { operationId: 'listVehicleMovementsOverPeriod', summary: 'Vehicle movements over a period', tags: ['vehicle-movements'], access: access('ListVehicleMovementsOverPeriod'), documents: PUBLIC, notImplemented: MOVEMENTS },
      { params: GroupParams, querystring: Type.Object({ ...PeriodQuery }), response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(MOVEMENTS));

  app.get('/groups/:group_id/blocks/:block_id/vehicle_movements', {
    schema: op(
      { operationId: 'listBlockVehicleMovementsUnderscored', summary: 'Movements of a block on a day (underscored spelling)', tags: ['vehicle-movements'], access: access('ListBlockVehicleMovements'), documents: PUBLIC, notImplemented: MOVEMENTS },
      { params: BlockParams, querystring: DateQuery, response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(MOVEMENTS));
}
