import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ALL_ROLES, groupRoles } from '../../platform/http/access.js';
import { DateEither, GroupParams, isoDate } from '../../platform/http/params.js';
import { INTERNAL, op } from '../../platform/http/route.js';
import { ref } from '../../platform/http/components.js';
import { ServiceDaySchedule } from './schemas.js';
import { scheduleOfDay, windowOf } from './service.js';

const GtfsTime = (description: string) => Type.String({ pattern: '^[0-9]{1,3}:[0-5][0-9]:[0-5][0-9]$', description: `${description} (HH:MM:SS of the service day; hours may pass 24).`, examples: ['07:00:00'] });

export async function scheduleRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  app.get('/groups/:group_id/schedule', {
    // The answer is built here from the database's rows (nothing to strip) and can hold a whole
    // city's day: JSON.stringify writes 300,000 stop times in about 0.4 s where the schema's
    // compiled serializer takes about 3 s. The schema still documents and types the answer.
    serializerCompiler: () => (data: unknown) => JSON.stringify(data),
    schema: op(
      {
        operationId: 'getServiceDaySchedule', summary: 'The published schedule of a service day: trips, stop times, stops and shapes in one read', tags: ['gtfs'],
        access: groupRoles(ALL_ROLES, 'GetScheduleRoleRequired', 'read'), documents: INTERNAL,
        description: [
          'The trips running on the service date in the GTFS version in force that day (the rules of the trips of a date: calendars, calendar_dates, frequencies expanded into instances identified by trip_id and start_time), each with route, service, direction, block, shape and headsign, and its stop times; the stops those trips call at; their shapes.',
          'Compact: the stop times of a trip and the points of a shape are parallel arrays (element i of each array is the i-th call or point), and times are seconds of the service day (add them to `day_start`). A weekday of a city network (800,000 stop times in the feed) is a few megabytes; `route_id` and the `from`/`to` window cut it further.',
          'Filters: `route_id` (comma-separated route ids) keeps those routes\' trips; `from` and `to` keep the trips running at some time of the window (first departure ≤ to and last arrival ≥ from); `include_shapes=false` leaves the shapes out. Times are as the feed gives them (no interpolation of intermediate stops without times).',
          '`day_type` (weekday, saturday, sunday) is the day type the predictions learn by. No published GTFS: `gtfs_id` null and empty lists. Used by `transit-ops simulate` (docs/simulator.md).',
        ].join('\n\n'),
      },
      {
        params: GroupParams,
        querystring: Type.Object({
          date: DateEither('The service date, YYYY-MM-DD or YYYYMMDD.'),
          route_id: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000, description: 'Comma-separated route ids: only their trips.' })),
          from: Type.Optional(GtfsTime('Only the trips still running at or after this time')),
          to: Type.Optional(GtfsTime('Only the trips started at or before this time')),
          include_shapes: Type.Optional(Type.Boolean({ default: true, description: 'false leaves the shapes out.' })),
        }),
        response: { 200: ref(ServiceDaySchedule) },
      },
    ),
  }, async (req) => {
    const q = req.query;
    const routeIds = q.route_id ? q.route_id.split(',').map((r) => r.trim()).filter((r) => r !== '') : undefined;
    return scheduleOfDay(ctx.db, req.params.group_id, isoDate(q.date), { ...(routeIds ? { routeIds } : {}), ...windowOf(q.from, q.to), includeShapes: q.include_shapes !== false });
  });
}
