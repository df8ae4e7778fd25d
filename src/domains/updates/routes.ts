import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DISPATCH, OFFICE, groupRoles } from '../../platform/http/access.js';
import { DateEither, GroupParams } from '../../platform/http/params.js';
import { AnyRecord, PUBLIC, notImplemented, op } from '../../platform/http/route.js';

const UPDATES = 'issue #8, trip updates and passenger information';

export async function updateRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/groups/:group_id/trip-updates/search', {
    schema: op(
      { operationId: 'searchTripUpdates', summary: 'Trip updates in force', tags: ['trip-updates'], access: groupRoles(OFFICE, 'SearchTripUpdatesRoleRequired', 'read'), documents: PUBLIC, notImplemented: UPDATES },
      {
        params: GroupParams,
        querystring: Type.Object({
          start_date: Type.Optional(DateEither('First date of the period (YYYY-MM-DD or YYYYMMDD).')),
          end_date: Type.Optional(DateEither('Last date of the period (YYYY-MM-DD or YYYYMMDD).')),
          route_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          trip_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        }),
        response: { 200: Type.Array(AnyRecord) },
      },
    ),
  }, notImplemented(UPDATES));

  app.put('/groups/:group_id/trip-updates', {
    schema: op(
      { operationId: 'putTripUpdate', summary: 'Record a trip update', tags: ['trip-updates'], access: groupRoles(DISPATCH, 'PutTripUpdateRoleRequired', 'write'), documents: PUBLIC, notImplemented: UPDATES },
      { params: GroupParams, body: AnyRecord, response: { 200: AnyRecord } },
    ),
  }, notImplemented(UPDATES));

  app.get('/groups/:group_id/deviations', {
    schema: op(
      { operationId: 'listDeviations', summary: 'Detours', tags: ['trip-updates'], access: groupRoles(OFFICE, 'ListDeviationsRoleRequired', 'read'), documents: PUBLIC, notImplemented: UPDATES },
      {
        params: GroupParams,
        querystring: Type.Object({
          start_date: Type.Optional(DateEither('First date of the period.')),
          end_date: Type.Optional(DateEither('Last date of the period.')),
        }),
        response: { 200: Type.Array(AnyRecord) },
      },
    ),
  }, notImplemented(UPDATES));
}
