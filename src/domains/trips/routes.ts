import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EXPORTERS, OFFICE, RS2, groupRoles } from '../../platform/http/access.js';
import { Date8, DateIso, GroupId, GroupParams } from '../../platform/http/params.js';
import { PeriodQuery } from '../../platform/http/periods.js';
import { AnyRecord, DATAHUB, PUBLIC, notImplemented, op } from '../../platform/http/route.js';
import { startTrackingWorker } from './tracking.js';

const TRIPS = 'issue #7, trips, tracking and exports';
const CsvResponse = { description: 'CSV', content: { 'text/csv': { schema: Type.String() } } };

export async function tripRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Tracking left dirty by a failed or interrupted refresh is recomputed in the background.
  const stopWorker = startTrackingWorker(app.ctx);
  app.addHook('onClose', stopWorker);

  app.get('/groups/:group_id/trips', {
    schema: op(
      { operationId: 'listTripsOfDate', summary: 'Recorded and scheduled trips of a date', tags: ['trips'], deprecated: true, access: groupRoles(RS2, 'ListTripsRoleRequired', 'read'), documents: PUBLIC, notImplemented: TRIPS },
      { params: GroupParams, querystring: Type.Object({ date: Date8() }), response: { 200: Type.Array(AnyRecord) } },
    ),
  }, notImplemented(TRIPS));

  app.get('/groups/:group_id/trips/:trip_id', {
    schema: op(
      {
        operationId: 'getTrip', summary: 'A trip on a date: schedule, execution and gap', tags: ['trips'], access: groupRoles(RS2, 'GetTripRoleRequired', 'read'), documents: PUBLIC,
        errors: { 404: { TripNotFound: 'the trip does not run on that date' }, 403: { ForbiddenDifferentTeam: 'the trip was operated by another team' } }, notImplemented: TRIPS,
      },
      {
        params: Type.Object({ group_id: GroupId, trip_id: Type.String({ minLength: 1, maxLength: 255 }) }),
        querystring: Type.Object({ date: DateIso('The service date, YYYY-MM-DD.'), merge: Type.Optional(Type.Boolean()) }),
        response: { 200: AnyRecord },
      },
    ),
  }, notImplemented(TRIPS));

  app.get('/groups/:group_id/export/trips', {
    schema: op(
      { operationId: 'exportTrips', summary: 'Recorded trips of a date as CSV (datahub)', tags: ['exports', 'trips'], access: groupRoles(EXPORTERS, 'ExportTripsRoleRequired', 'export'), documents: DATAHUB, produces: ['text/csv'], notImplemented: TRIPS },
      { params: GroupParams, querystring: Type.Object({ date: Date8() }), response: { 200: CsvResponse } },
    ),
  }, notImplemented(TRIPS));

  app.get('/groups/:group_id/export/vehicle-exploitation', {
    schema: op(
      { operationId: 'exportVehicleExploitation', summary: 'Vehicle exploitation rows (PCS-CNT layout) as CSV', tags: ['exports'], access: groupRoles(EXPORTERS, 'ExportVehicleExploitationRoleRequired', 'export'), documents: PUBLIC, produces: ['text/csv'], notImplemented: TRIPS },
      { params: GroupParams, querystring: Type.Object({ ...PeriodQuery }), response: { 200: CsvResponse } },
    ),
  }, notImplemented(TRIPS));

  app.get('/groups/:group_id/stats/trip-tracking', {
    schema: op(
      { operationId: 'getTripTrackingStats', summary: 'Punctuality, delays and completion over a period', tags: ['stats', 'trips'], access: groupRoles(OFFICE, 'GetTripTrackingStatsRoleRequired', 'read'), documents: PUBLIC, notImplemented: TRIPS },
      { params: GroupParams, querystring: Type.Object({ ...PeriodQuery }), response: { 200: AnyRecord } },
    ),
  }, notImplemented(TRIPS));

  app.get('/groups/:group_id/export/trip-tracking', {
    schema: op(
      { operationId: 'exportTripTracking', summary: 'Tracking detail per trip and stop as CSV', tags: ['exports', 'trips'], access: groupRoles(EXPORTERS, 'ExportTripTrackingRoleRequired', 'export'), documents: PUBLIC, produces: ['text/csv'], notImplemented: TRIPS },
      { params: GroupParams, querystring: Type.Object({ ...PeriodQuery }), response: { 200: CsvResponse } },
    ),
  }, notImplemented(TRIPS));
}

