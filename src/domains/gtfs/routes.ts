import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ALL_ROLES, groupRoles, publicAccess } from '../../platform/http/access.js';
import { GroupId, GroupParams, Nullable } from '../../platform/http/params.js';
import { AnyRecord, PUBLIC, notImplemented, op } from '../../platform/http/route.js';

const GtfsId = Type.String({ minLength: 1, maxLength: 64, description: 'A GTFS version of the group (as listed by GET /groups/{group_id}/gtfs).' });
const CalendarParams = Type.Object({ group_id: GroupId, gtfs_id: GtfsId });
const ONDEMAND = ['device_event_sourcing', 'on_demand'] as const;
const GTFS_ISSUE = 'issue #4, the scheduled side';

export async function gtfsRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/groups/:group_id/gtfs/:gtfs_id/calendars', {
    schema: op(
      {
        operationId: 'listGtfsCalendars', summary: 'The calendars (services) of a GTFS version', tags: ['gtfs'], access: publicAccess({ group: true }), documents: PUBLIC,
        errors: { 422: { InvalidGTFSId: 'gtfs_id names no GTFS version of the group' } }, notImplemented: GTFS_ISSUE,
      },
      { params: CalendarParams, response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(GTFS_ISSUE));

  app.get('/groups/:group_id/gtfs/:gtfs_id/calendars/:service_id', {
    schema: op(
      {
        operationId: 'getGtfsCalendar', summary: 'One calendar of a GTFS version, or null', tags: ['gtfs'], access: publicAccess({ group: true }), documents: PUBLIC,
        errors: { 404: { GtfsCalendarNotFound: 'gtfs_id names no GTFS version of the group' } }, notImplemented: GTFS_ISSUE,
      },
      { params: Type.Object({ group_id: GroupId, gtfs_id: GtfsId, service_id: Type.String({ minLength: 1, maxLength: 255 }) }), response: { 200: Nullable(AnyRecord as never) } },
    ),
  }, notImplemented(GTFS_ISSUE));

  app.get('/groups/:group_id/on-demand-routes/public', {
    schema: op(
      { operationId: 'listPublicOnDemandRoutes', summary: 'Active and inactive on-demand routes', tags: ['on-demand'], access: publicAccess({ group: true, features: ONDEMAND }), documents: PUBLIC, notImplemented: GTFS_ISSUE },
      { params: GroupParams, response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(GTFS_ISSUE));

  app.get('/groups/:group_id/on-demand-routes/public/:route_id', {
    schema: op(
      {
        operationId: 'getPublicOnDemandRoute', summary: 'One on-demand route (active or inactive)', tags: ['on-demand'], access: publicAccess({ group: true, features: ONDEMAND }), documents: PUBLIC,
        errors: { 404: { OnDemandRouteNotFound: 'unknown or archived route (indistinguishable by design)' } }, notImplemented: GTFS_ISSUE,
      },
      { params: Type.Object({ group_id: GroupId, route_id: Type.String({ minLength: 1, maxLength: 128 }) }), response: { 200: AnyRecord } },
    ),
  }, notImplemented(GTFS_ISSUE));

  app.get('/groups/:group_id/rail/station-links', {
    schema: op(
      { operationId: 'listRailStationLinks', summary: 'Links of network stops to rail stations', tags: ['rail'], access: groupRoles(ALL_ROLES, 'ListRailStationLinksRoleRequired', 'read', ['rail_data']), documents: PUBLIC, notImplemented: GTFS_ISSUE },
      { params: GroupParams, response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(GTFS_ISSUE));
}
