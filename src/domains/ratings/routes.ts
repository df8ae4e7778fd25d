import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { groupRoles } from '../../platform/http/access.js';
import { GroupId, GroupParams, Nullable, ObjectIdString, StringEnum } from '../../platform/http/params.js';
import { AnyRecord, PUBLIC, notImplemented, op } from '../../platform/http/route.js';

const RATINGS = 'issue #5, resources and planning';
/** Who reads the ratings of the driver application: not drivers (spec: InvalidRole for others). */
export const RATING_READERS = ['admin', 'technical', 'operator', 'regulator', 'reader'] as const;

export async function ratingRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/groups/:group_id/ratings', {
    schema: op(
      { operationId: 'listRatings', summary: 'Ratings of the driver application', tags: ['ratings', 'stats'], access: groupRoles(RATING_READERS, 'InvalidRole', 'read'), documents: PUBLIC, notImplemented: RATINGS },
      {
        params: GroupParams,
        querystring: Type.Object({ group_by: Type.Optional(StringEnum(['driver_version', 'group'] as const, { description: 'Absent: each rating; driver_version: averages per app version; group: one average for the group.' })) }),
        response: { 200: Type.Array(AnyRecord) },
      },
    ),
  }, notImplemented(RATINGS));

  app.get('/groups/:group_id/drivers/:driver_id/ratings', {
    schema: op(
      { operationId: 'getDriverRating', summary: 'The driver\'s own rating of an app version, or null', tags: ['ratings'], access: groupRoles(['driver'], 'GetDriverRatingRoleRequired', 'read'), documents: PUBLIC, notImplemented: RATINGS },
      {
        params: Type.Object({ group_id: GroupId, driver_id: ObjectIdString('The driver identifier') }),
        querystring: Type.Object({ driver_version: Type.String({ minLength: 1, maxLength: 64, description: 'The version of the driver application.' }) }),
        response: { 200: Nullable(AnyRecord as never) },
      },
    ),
  }, notImplemented(RATINGS));
}
