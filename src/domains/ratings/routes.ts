import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { groupRoles } from '../../platform/http/access.js';
import { GroupId, GroupParams, Nullable, ObjectIdString, StringEnum } from '../../platform/http/params.js';
import { INTERNAL, PUBLIC, op } from '../../platform/http/route.js';
import { ref } from '../../platform/http/components.js';
import { DriverVersion, GROUP_BY, RatingBody, RatingRecord, RatingsAnswer } from './schemas.js';
import { getDriverRating, listRatings, putDriverRating, type RatingCaller } from './service.js';

/** Who reads the ratings of the driver application: not drivers (spec: InvalidRole for others). */
export const RATING_READERS = ['admin', 'technical', 'operator', 'regulator', 'reader'] as const;

const DriverRatingParams = Type.Object({ group_id: GroupId, driver_id: ObjectIdString('The driver identifier') });
const own = {
  403: { ForbiddenDifferentDriver: 'a driver reads and gives only the rating of the driver record their account is linked to (memberships.driver_id); superusers may act for any driver' },
  404: { DriverNotFound: 'no driver with this id in the group' },
};
const caller = (req: FastifyRequest): RatingCaller => ({ scope: req.groupScope!, superuser: req.principal!.superuser });

export async function ratingRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  app.get('/groups/:group_id/ratings', {
    schema: op(
      {
        operationId: 'listRatings', summary: 'Ratings of the driver application',
        description: 'Ratings of the drivers the caller\'s teams see. group_by absent: every rating, ordered by app version; driver_version: mean and count per app version; group: one mean and count for the group.',
        tags: ['ratings', 'stats'], access: groupRoles(RATING_READERS, 'InvalidRole', 'read'), documents: PUBLIC,
      },
      {
        params: GroupParams,
        querystring: Type.Object({ group_by: Type.Optional(StringEnum(GROUP_BY, { description: 'Absent: each rating; driver_version: averages per app version; group: one average for the group.' })) }),
        response: { 200: RatingsAnswer },
      },
    ),
  }, async (req) => listRatings(ctx.db, req.groupScope!, req.query.group_by));

  app.get('/groups/:group_id/drivers/:driver_id/ratings', {
    schema: op(
      { operationId: 'getDriverRating', summary: 'The driver\'s own rating of an app version, or null', tags: ['ratings'], access: groupRoles(['driver'], 'GetDriverRatingRoleRequired', 'read'), documents: PUBLIC, errors: own },
      {
        params: DriverRatingParams,
        querystring: Type.Object({ driver_version: DriverVersion }),
        response: { 200: Nullable(ref(RatingRecord)) },
      },
    ),
  }, async (req) => getDriverRating(ctx.db, caller(req), req.params.driver_id, req.query.driver_version));

  app.put('/groups/:group_id/drivers/:driver_id/ratings', {
    schema: op(
      { operationId: 'putDriverRating', summary: 'A driver rates a version of the driver application (creates or replaces their rating)', tags: ['ratings', 'device-api'], access: groupRoles(['driver'], 'PutDriverRatingRoleRequired', 'device'), documents: INTERNAL, errors: own },
      { params: DriverRatingParams, body: ref(RatingBody), response: { 200: ref(RatingRecord) } },
    ),
  }, async (req) => putDriverRating(ctx, caller(req), req.params.driver_id, req.body));
}
