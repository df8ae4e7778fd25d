import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { OFFICE, RS3, RS4, RS5, RS6, groupRoles, publicAccess } from '../../platform/http/access.js';
import { GroupId, GroupParams, ObjectIdString, StringEnum } from '../../platform/http/params.js';
import { AnyRecord, DATAHUB, PUBLIC, notImplemented, op } from '../../platform/http/route.js';

/** Vehicle status values (spec: States: a status filter exists; allowed values are ours). */
export const VEHICLE_STATUSES = ['active', 'maintenance', 'out_of_service', 'archived'] as const;
const Statuses = Type.Array(StringEnum(VEHICLE_STATUSES), { uniqueItems: true, description: 'Keep vehicles with one of these statuses (repeat the parameter; values unique).' });
const StatusesQuery = Type.Object({ statuses: Type.Optional(Statuses) });
const VehicleParams = Type.Object({ group_id: GroupId, vehicle_id: Type.String({ minLength: 1, maxLength: 128 }) });
const DriverParams = Type.Object({ group_id: GroupId, driver_id: ObjectIdString('The driver identifier') });
const CSV = ['text/csv'];
const FLEET = 'issue #5, resources and planning';

export async function fleetRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/groups/:group_id/vehicles', {
    schema: op(
      { operationId: 'listVehicles', summary: 'Vehicles, filtered by the caller\'s teams and by status', tags: ['vehicles'], access: groupRoles(RS3, 'ListVehiclesRoleRequired', 'read'), documents: PUBLIC, notImplemented: FLEET },
      { params: GroupParams, querystring: StatusesQuery, response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(FLEET));

  app.get('/groups/:group_id/vehicles/public', {
    schema: op(
      { operationId: 'listPublicVehicles', summary: 'Public vehicle records (no private fields)', tags: ['vehicles'], access: publicAccess({ group: true }), documents: PUBLIC, notImplemented: FLEET },
      { params: GroupParams, querystring: StatusesQuery, response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(FLEET));

  app.get('/groups/:group_id/vehicles/:vehicle_id', {
    schema: op(
      { operationId: 'getVehicle', summary: 'One vehicle, filtered by the caller\'s teams', tags: ['vehicles'], access: groupRoles(RS4, 'GetVehicleRoleRequired', 'read'), documents: PUBLIC, errors: { 404: { VehicleNotFound: 'unknown vehicle, or outside the caller\'s teams' } }, notImplemented: FLEET },
      { params: VehicleParams, response: { 200: AnyRecord } },
    ),
  }, notImplemented(FLEET));

  app.get('/groups/:group_id/export/vehicles', {
    schema: op(
      { operationId: 'exportVehicles', summary: 'Vehicles as CSV (datahub)', tags: ['exports', 'vehicles'], access: groupRoles(RS4, 'ExportVehiclesRoleRequired', 'export'), documents: DATAHUB, produces: CSV, notImplemented: FLEET },
      { params: GroupParams, querystring: StatusesQuery, response: { 200: { description: 'CSV', content: { 'text/csv': { schema: Type.String() } } } } },
    ),
  }, notImplemented(FLEET));

  app.get('/groups/:group_id/vehicle-amount', {
    schema: op(
      { operationId: 'getVehicleAmount', summary: 'The number of registered vehicles', tags: ['vehicles', 'stats'], access: groupRoles(OFFICE, 'InvalidRole', 'read'), documents: PUBLIC, notImplemented: FLEET },
      { params: GroupParams, response: { 200: AnyRecord } },
    ),
  }, notImplemented(FLEET));

  app.get('/groups/:group_id/drivers', {
    schema: op(
      { operationId: 'listDrivers', summary: 'Drivers, filtered by the caller\'s teams', tags: ['drivers'], access: groupRoles(RS5, 'ListDriversRoleRequired', 'read'), documents: PUBLIC, notImplemented: FLEET },
      {
        params: GroupParams,
        querystring: Type.Object({
          archived: Type.Boolean({ default: false, description: 'false (default): drivers in service; true: archived drivers.' }),
          driver_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Keep the driver with this internal code.' })),
        }),
        response: { 200: Type.Array(AnyRecord) },
      },
    ),
  }, notImplemented(FLEET));

  app.get('/groups/:group_id/drivers/:driver_id', {
    schema: op(
      { operationId: 'getDriver', summary: 'One driver', tags: ['drivers'], access: groupRoles(RS6, 'GetDriverRoleRequired', 'read'), documents: PUBLIC, errors: { 404: { DriverNotFound: 'unknown driver, or outside the caller\'s teams' } }, notImplemented: FLEET },
      { params: DriverParams, response: { 200: AnyRecord } },
    ),
  }, notImplemented(FLEET));

  app.get('/groups/:group_id/export/drivers', {
    schema: op(
      { operationId: 'exportDrivers', summary: 'Drivers as CSV (datahub)', tags: ['exports', 'drivers'], access: groupRoles(RS6, 'ExportDriversRoleRequired', 'export'), documents: DATAHUB, produces: CSV, notImplemented: FLEET },
      {
        params: GroupParams,
        querystring: Type.Object({ archived: Type.Optional(Type.Boolean({ description: 'Absent: every driver; true or false: only archived, or only in service.' })) }),
        response: { 200: { description: 'CSV', content: { 'text/csv': { schema: Type.String() } } } },
      },
    ),
  }, notImplemented(FLEET));

  app.get('/groups/:group_id/depots', {
    schema: op(
      { operationId: 'listDepots', summary: 'Depots', tags: ['depots'], access: groupRoles(RS6, 'ListDepotsRoleRequired', 'read'), documents: PUBLIC, notImplemented: FLEET },
      { params: GroupParams, response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(FLEET));
}
