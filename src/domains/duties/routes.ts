import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { OFFICE, RS1, RS6, groupRoles } from '../../platform/http/access.js';
import { GroupId, GroupParams, ObjectIdString, mutuallyExclusive } from '../../platform/http/params.js';
import { Paging, PeriodQuery } from '../../platform/http/periods.js';
import { AnyRecord, PUBLIC, notImplemented, op } from '../../platform/http/route.js';

const ACTUAL = 'issue #6, the device API and what it records';

export async function dutyRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/groups/:group_id/duties', {
    schema: op(
      { operationId: 'listDuties', summary: 'Duties actually operated over a period', tags: ['duties'], access: groupRoles(OFFICE, 'ListDutiesRoleRequired', 'read'), documents: PUBLIC, notImplemented: ACTUAL },
      {
        params: GroupParams,
        querystring: Type.Object({
          ...PeriodQuery,
          driver_id: Type.Optional(ObjectIdString('Keep this driver\'s duties')),
          vehicle_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          at: Type.Optional(Type.Integer({ minimum: 0, description: 'Keep duties open at this instant (UNIX seconds): with vehicle_id, who was driving the vehicle then.' })),
          ...Paging,
        }),
        response: { 200: Type.Array(AnyRecord) },
      },
    ),
  }, notImplemented(ACTUAL));

  app.get('/groups/:group_id/duties/:duty_id', {
    schema: op(
      { operationId: 'getDuty', summary: 'A duty and the trips it covers', tags: ['duties'], access: groupRoles(OFFICE, 'GetDutyRoleRequired', 'read'), documents: PUBLIC, errors: { 404: { DutyNotFound: 'unknown duty' } }, notImplemented: ACTUAL },
      { params: Type.Object({ group_id: GroupId, duty_id: Type.String({ minLength: 1, maxLength: 64 }) }), response: { 200: AnyRecord } },
    ),
  }, notImplemented(ACTUAL));

  app.get('/groups/:group_id/trip-events', {
    schema: op(
      { operationId: 'listTripEvents', summary: 'Trip events over a period', tags: ['trip-events'], access: groupRoles(OFFICE, 'ListTripEventsRoleRequired', 'read'), documents: PUBLIC, notImplemented: ACTUAL },
      {
        params: GroupParams,
        querystring: Type.Object({
          ...PeriodQuery,
          trip_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          vehicle_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          ...Paging,
        }),
        response: { 200: Type.Array(AnyRecord) },
      },
    ),
  }, notImplemented(ACTUAL));

  app.get('/groups/:group_id/devices/:device_id/history', {
    schema: op(
      {
        operationId: 'getDeviceHistory', summary: 'The full state of a device at an instant', tags: ['devices'], access: groupRoles(RS1, 'GetDeviceHistoryRoleRequired', 'read'), documents: PUBLIC,
        description: '`at` (inclusive upper bound) and `before_id` (strict upper bound) are mutually exclusive.',
        errors: { 404: { DeviceNotFound: 'unknown device' } }, notImplemented: ACTUAL,
      },
      {
        params: Type.Object({ group_id: GroupId, device_id: Type.String({ minLength: 1, maxLength: 128 }) }),
        querystring: Type.Object({
          at: Type.Optional(Type.Integer({ minimum: 0, description: 'UNIX seconds, inclusive upper bound.' })),
          before_id: Type.Optional(ObjectIdString('A history event id, strict upper bound')),
        }, mutuallyExclusive('at', 'before_id')),
        response: { 200: AnyRecord },
      },
    ),
  }, notImplemented(ACTUAL));

  app.get('/groups/:group_id/danger-zones', {
    schema: op(
      { operationId: 'listDangerZones', summary: 'Declared danger zones', tags: ['danger-zones'], access: groupRoles([...RS6, 'admin', 'technical'], 'ListDangerZonesRoleRequired', 'read'), documents: PUBLIC, notImplemented: ACTUAL },
      { params: GroupParams, response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(ACTUAL));
}
