import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN, groupRoles } from '../../platform/http/access.js';
import { invalid } from '../../platform/http/errors.js';
import { Date8, GroupParams, ObjectIdString, StringEnum } from '../../platform/http/params.js';
import { PUBLIC, op } from '../../platform/http/route.js';
import { REPORT_TABLES, TRACKING_TABLES } from '../../platform/http/read-cache.js';
import { TEAM_FILTER_NOTE } from '../../platform/http/teams.js';
import { CSV_COLUMNS, MAX_ASSIGNMENTS, PlanningBody, PlanningRecord } from './schemas.js';
import { ref } from '../../platform/http/components.js';
import { assignmentsFromCsv, getPlanning, locate, putPlanning } from './service.js';

const CSV_LAYOUT =
  `format=csv: a \`text/csv\` body with a header line and \`;\` separators (RFC 4180 quoting, UTF-8), columns ${CSV_COLUMNS.map((c) => `\`${c}\``).join(', ')} ` +
  '(trip_id and date required; the others may be absent or empty); errors name `["body", <line>, <column>]` (the header is line 1).';

export async function planningRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  app.get('/groups/:group_id/planning', {
    schema: op(
      {
        operationId: 'getPlanning', summary: 'The planning of a date', tags: ['planning'], access: groupRoles(['driver', 'regulator', 'reader', 'operator'], 'GetPlanningRoleRequired', 'read'), documents: PUBLIC,
        cache: { except: [...REPORT_TABLES, ...TRACKING_TABLES, 'duties'] },
        description: 'Each record carries what a client needs to compare the planning with the duties of the same date: trip, scheduled times, route, block, vehicle, driver. Filtered by the caller\'s teams (through the vehicle and the driver); a driver sees only their own assignments (the driver record the account is linked to).\n\n' +
          `An assignment of the caller's teams may name a vehicle or driver of another team: by id only (license_plate, fleet_number, staff_number and driver_name null). ${TEAM_FILTER_NOTE}`,
      },
      {
        params: GroupParams,
        querystring: Type.Object({
          date: Date8(),
          driver_id: Type.Optional(ObjectIdString('Keep this driver\'s assignments')),
          vehicle_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
        }),
        response: { 200: Type.Array(ref(PlanningRecord)) },
      },
    ),
  }, async (req) => getPlanning(ctx.db, req.groupScope!, req.query));

  app.put('/groups/:group_id/planning', {
    bodyLimit: 64 * 1024 * 1024,
    schema: op(
      {
        operationId: 'putPlanning', summary: 'Create or replace plannings', tags: ['planning'], access: groupRoles(ADMIN, 'PutPlanningRoleRequired', 'write'), documents: PUBLIC,
        consumes: ['application/json', 'text/csv'],
        description:
          `Creates or replaces the planning of each (trip, date), all or nothing (at most ${MAX_ASSIGNMENTS} assignments). Each assignment names a trip running that date per the GTFS in force, and a vehicle ` +
          '(vehicle_id, or license_plate when the id is unknown) or a driver (driver_id, or staff_number), or both; redundant identifiers must agree. ' +
          `format=json (default): a JSON array of assignments; errors name \`["body", <index>, <field>]\`. ${CSV_LAYOUT} Answers the inserted planning records.`,
      },
      {
        params: GroupParams,
        querystring: Type.Object({
          format: StringEnum(['json', 'csv'] as const, { default: 'json', description: 'json (default): a JSON array of assignments; csv: a CSV body (layout in the description).' }),
          filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Name of the file the planning came from, kept for audit.' })),
        }),
        body: ref(PlanningBody),
        response: { 200: Type.Array(ref(PlanningRecord)) },
      },
    ),
  }, async (req) => {
    const { format, filename } = req.query;
    const body = req.body;
    if (format === 'csv' && typeof body !== 'string') throw invalid(['query', 'format'], 'format=csv takes a text/csv body', 'value_error', format);
    if (format === 'json' && typeof body === 'string') throw invalid(['body'], 'format=json takes a JSON array of assignments (send format=csv for a CSV file)', 'list_type');
    const assignments = typeof body === 'string' ? await assignmentsFromCsv(body) : locate(body);
    return putPlanning(ctx, req.groupScope!, assignments, filename ?? null, req.principal!.userId);
  });
}
