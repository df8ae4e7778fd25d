import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DISPATCH, OFFICE, groupRoles } from '../../platform/http/access.js';
import { DateEither, GroupId, GroupParams, StringEnum } from '../../platform/http/params.js';
import { PUBLIC, op } from '../../platform/http/route.js';
import { EndTripUpdateBody, PutTripUpdateBody, TripUpdateRecord, UPDATE_KINDS } from './schemas.js';
import { ref } from '../../platform/http/components.js';
import { MAX_UPDATE_DAYS, endTripUpdate, putTripUpdate, removeTripUpdate, searchTripUpdates } from './service.js';

const UpdateParams = Type.Object({ group_id: GroupId, update_id: Type.String({ minLength: 1, maxLength: 128 }) });
const notFound = { 404: { TripUpdateNotFound: 'no update with this id in the group' } } as const;
const when = {
  date: Type.Optional(DateEither('In force on this service date (default: today in the group\'s time zone).')),
  start_date: Type.Optional(DateEither('In force at some point from this date…')),
  end_date: Type.Optional(DateEither(`…to this date (both included; at most ${MAX_UPDATE_DAYS} days).`)),
  route_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Updates of the route, and of its trips.' })),
  trip_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Updates of the trip, and of its route.' })),
};
const overlapRule =
  'Overlaps: every update of a trip in force on a date applies, in the order recorded; a cancel wins over everything; a stop touched by several updates ends as the most recent one says; added stops and messages accumulate; of several detours, the most recent is the path.';

export async function updateRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  app.put('/groups/:group_id/trip-updates', {
    schema: op(
      {
        operationId: 'putTripUpdate', summary: 'Record a trip update (cancel, skip, move or add a stop, detour, message)', tags: ['trip-updates'],
        access: groupRoles(DISPATCH, 'PutTripUpdateRoleRequired', 'write'), documents: PUBLIC,
        description: `The update overlays the schedule for its dates and never rewrites the GTFS: trips of the day, tracking, the trip object, the live stream, GTFS-Realtime and SIRI read it. Idempotent by update_id: the same id with the same body answers the same record; with another body, 409 TripUpdateConflict. ${overlapRule}`,
        errors: { 409: { TripUpdateConflict: 'update_id was used with another body' } },
      },
      { params: GroupParams, body: ref(PutTripUpdateBody), response: { 200: ref(TripUpdateRecord) } },
    ),
  }, async (req) => putTripUpdate(ctx, req.groupScope!, req.body, req.principal!.userId));

  app.get('/groups/:group_id/trip-updates/search', {
    schema: op(
      { operationId: 'searchTripUpdates', summary: 'Trip updates in force on a date or during a period', description: overlapRule, tags: ['trip-updates'], access: groupRoles(OFFICE, 'SearchTripUpdatesRoleRequired', 'read'), documents: PUBLIC },
      {
        params: GroupParams,
        querystring: Type.Object({
          ...when,
          kind: Type.Optional(StringEnum(UPDATE_KINDS)),
          include_removed: Type.Boolean({ default: false, description: 'Also list removed updates.' }),
        }),
        response: { 200: Type.Array(ref(TripUpdateRecord)) },
      },
    ),
  }, async (req) => searchTripUpdates(ctx, req.groupScope!, req.query));

  app.get('/groups/:group_id/deviations', {
    schema: op(
      { operationId: 'listDeviations', summary: 'Detours in force on a date or during a period', tags: ['trip-updates'], access: groupRoles(OFFICE, 'ListDeviationsRoleRequired', 'read'), documents: PUBLIC },
      { params: GroupParams, querystring: Type.Object(when), response: { 200: Type.Array(ref(TripUpdateRecord)) } },
    ),
  }, async (req) => searchTripUpdates(ctx, req.groupScope!, { ...req.query, kind: 'detour' }));

  app.post('/groups/:group_id/trip-updates/:update_id/end', {
    schema: op(
      {
        operationId: 'endTripUpdate', summary: 'End a trip update early', tags: ['trip-updates'], access: groupRoles(DISPATCH, 'EndTripUpdateRoleRequired', 'write'), documents: PUBLIC,
        description: 'Its last date becomes end_date (default: today in the group\'s time zone); the dates before stay as they were.',
        errors: { ...notFound, 409: { TripUpdateRemoved: 'the update was removed' } },
      },
      { params: UpdateParams, body: ref(EndTripUpdateBody), response: { 200: ref(TripUpdateRecord) } },
    ),
  }, async (req) => endTripUpdate(ctx, req.groupScope!, req.params.update_id, req.body.end_date));

  app.delete('/groups/:group_id/trip-updates/:update_id', {
    schema: op(
      {
        operationId: 'removeTripUpdate', summary: 'Remove a trip update', tags: ['trip-updates'], access: groupRoles(DISPATCH, 'RemoveTripUpdateRoleRequired', 'write'), documents: PUBLIC,
        description: 'It no longer applies to any date; the record stays, with removed_at (search with include_removed).', errors: notFound,
      },
      { params: UpdateParams, response: { 200: ref(TripUpdateRecord) } },
    ),
  }, async (req) => removeTripUpdate(ctx, req.groupScope!, req.params.update_id));
}
