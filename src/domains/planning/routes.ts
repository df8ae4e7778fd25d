import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN, groupRoles } from '../../platform/http/access.js';
import { Date8, GroupParams, ObjectIdString, StringEnum } from '../../platform/http/params.js';
import { AnyRecord, PUBLIC, notImplemented, op } from '../../platform/http/route.js';

const PLANNING = 'issue #5, resources and planning';

export const Assignment = Type.Object(
  {
    trip_id: Type.String({ minLength: 1, maxLength: 255 }),
    date: Date8('The service date of the trip, YYYYMMDD.'),
    vehicle_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The vehicle (most efficient).' })),
    license_plate: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'The vehicle, when its id is unknown; must match vehicle_id when both are sent.' })),
    driver_id: Type.Optional(ObjectIdString('The driver (most efficient)')),
    staff_number: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The driver, when the id is unknown; must match driver_id when both are sent.' })),
  },
  { additionalProperties: false, description: 'Attaches a trip and a date to at least one vehicle or one driver.' },
);

export async function planningRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/groups/:group_id/planning', {
    schema: op(
      { operationId: 'getPlanning', summary: 'The planning of a date', tags: ['planning'], access: groupRoles(['driver', 'regulator', 'reader', 'operator'], 'GetPlanningRoleRequired', 'read'), documents: PUBLIC, notImplemented: PLANNING },
      {
        params: GroupParams,
        querystring: Type.Object({
          date: Date8(),
          driver_id: Type.Optional(ObjectIdString('Keep this driver\'s assignments')),
          vehicle_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
        }),
        response: { 200: Type.Array(AnyRecord) },
      },
    ),
  }, notImplemented(PLANNING));

  app.put('/groups/:group_id/planning', {
    schema: op(
      { operationId: 'putPlanning', summary: 'Create or replace plannings', tags: ['planning'], access: groupRoles(ADMIN, 'PutPlanningRoleRequired', 'write'), documents: PUBLIC, consumes: ['application/json', 'text/csv'], notImplemented: PLANNING },
      {
        params: GroupParams,
        querystring: Type.Object({
          format: StringEnum(['json', 'csv'] as const, { default: 'json', description: 'json (default): a JSON array of assignments; csv: a CSV body.' }),
          filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Name of the file the planning came from, kept for audit.' })),
        }),
        body: Type.Union([Type.Array(Assignment, { maxItems: 100_000 }), Type.String()]),
        response: { 200: Type.Array(AnyRecord) },
      },
    ),
  }, notImplemented(PLANNING));
}
