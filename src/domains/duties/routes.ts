import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { OFFICE, RS1, RS6, groupRoles } from '../../platform/http/access.js';
import { GroupId, GroupParams, Nullable, ObjectIdString, UnixSeconds, mutuallyExclusive } from '../../platform/http/params.js';
import { DEFAULT_LIMIT, page } from '../../platform/http/paging.js';
import { Paging, PeriodQuery } from '../../platform/http/periods.js';
import { INTERNAL, PUBLIC, op } from '../../platform/http/route.js';
import { TEAM_EMBED_NOTE, TEAM_FILTER_NOTE } from '../../platform/http/teams.js';
import { DEVICE, deviceErrors, deviceOf } from '../device/credential.js';
import { DutyRecord } from '../device/schemas.js';
import { ref } from '../../platform/http/components.js';
import { DangerZoneBody, DangerZoneNear, DangerZonePatch, DangerZoneRecord, DeviceHistoryRecord, TripEventRecord } from './schemas.js';
import { MAX_PERIOD_DAYS, createZone, currentDuty, deviceHistory, getDuty, listDuties, listTripEvents, listZones, updateZone, zonesAround } from './service.js';

const ZONE_EDITORS = ['admin', 'operator', 'regulator'] as const;
const teamNote = `A caller limited to teams sees the duties whose driver or vehicle is in one of their teams. ${TEAM_EMBED_NOTE}`;
const periodNote = `The period is a range of service dates (both included, YYYY-MM-DD or YYYYMMDD) of at most ${MAX_PERIOD_DAYS} days; results are paged (limit, cursor, Link header).`;

export async function dutyRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  // The device API's reads of duties (tag device-api): the duty open on the calling device, the danger zones around it.
  app.get('/groups/:group_id/device/duty', {
    schema: op(
      { operationId: 'getDeviceCurrentDuty', summary: 'The duty open on this device, or null', tags: ['device-api'], access: DEVICE, documents: INTERNAL, errors: deviceErrors },
      { params: GroupParams, response: { 200: Nullable(ref(DutyRecord)) } },
    ),
  }, async (req) => currentDuty(ctx.db, req.params.group_id, deviceOf(req.principal, req.params.group_id), ctx.clock.now()));

  app.get('/groups/:group_id/device/danger-zones', {
    schema: op(
      { operationId: 'getDeviceDangerZones', summary: 'Danger zones in force around a position, to warn the driver on approach', tags: ['device-api'], access: DEVICE, documents: INTERNAL, errors: deviceErrors },
      {
        params: GroupParams,
        querystring: Type.Object({
          lat: Type.Number({ minimum: -90, maximum: 90 }),
          lon: Type.Number({ minimum: -180, maximum: 180 }),
          radius_m: Type.Number({ minimum: 1, maximum: 50_000, default: 5000, description: 'Search radius around the position, in metres (default 5000).' }),
        }),
        response: { 200: Type.Array(ref(DangerZoneNear)) },
      },
    ),
  }, async (req) => {
    deviceOf(req.principal, req.params.group_id);
    return zonesAround(ctx.db, req.params.group_id, req.query, ctx.clock.now());
  });

  app.get('/groups/:group_id/duties', {
    schema: op(
      {
        operationId: 'listDuties', summary: 'Duties actually operated over a period', tags: ['duties'], access: groupRoles(OFFICE, 'ListDutiesRoleRequired', 'read'), documents: PUBLIC,
        description: `Duties signed on during the period, by sign-on time. With \`at\` (UNIX seconds), the duties open at that instant instead: with vehicle_id, who was driving the vehicle then. ${periodNote}\n\n${teamNote} ${TEAM_FILTER_NOTE}`,
      },
      {
        params: GroupParams,
        querystring: Type.Object({
          ...PeriodQuery,
          driver_id: Type.Optional(ObjectIdString('Keep this driver\'s duties')),
          vehicle_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          at: Type.Optional(UnixSeconds('Keep duties open at this instant: with vehicle_id, who was driving the vehicle then')),
          ...Paging,
        }),
        response: { 200: Type.Array(ref(DutyRecord)) },
      },
    ),
  }, async (req, reply) => {
    const limit = req.query.limit ?? DEFAULT_LIMIT;
    const rows = await listDuties(ctx.db, req.groupScope!, { ...req.query, limit });
    return page(req, reply, rows, limit, (d) => [d.signed_on_at, d.duty_id]);
  });

  app.get('/groups/:group_id/duties/:duty_id', {
    schema: op(
      {
        operationId: 'getDuty', summary: 'A duty and the trips it covers', tags: ['duties'], access: groupRoles(OFFICE, 'GetDutyRoleRequired', 'read'), documents: PUBLIC,
        description: teamNote,
        errors: { 404: { DutyNotFound: 'unknown duty' }, 403: { ForbiddenDifferentTeam: 'the duty\'s driver and vehicle are both outside the caller\'s teams' } },
      },
      { params: Type.Object({ group_id: GroupId, duty_id: Type.String({ minLength: 1, maxLength: 64 }) }), response: { 200: ref(DutyRecord) } },
    ),
  }, async (req) => getDuty(ctx.db, req.groupScope!, req.params.duty_id));

  app.get('/groups/:group_id/trip-events', {
    schema: op(
      {
        operationId: 'listTripEvents', summary: 'Trip events over a period', tags: ['trip-events'], access: groupRoles(OFFICE, 'ListTripEventsRoleRequired', 'read'), documents: PUBLIC,
        description: `Events of the trips of the service dates of the period, by event time, each with the duty (driver, vehicle) it was recorded in. ${periodNote}\n\n` +
          `A caller limited to teams sees the events recorded during the duties they see (driver or vehicle in one of their teams). ${TEAM_EMBED_NOTE} ${TEAM_FILTER_NOTE}`,
      },
      {
        params: GroupParams,
        querystring: Type.Object({
          ...PeriodQuery,
          trip_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          vehicle_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          ...Paging,
        }),
        response: { 200: Type.Array(ref(TripEventRecord)) },
      },
    ),
  }, async (req, reply) => {
    const limit = req.query.limit ?? DEFAULT_LIMIT;
    const rows = await listTripEvents(ctx.db, req.groupScope!, { ...req.query, limit });
    return page(req, reply, rows, limit, (r) => r._key).map(({ _key, ...r }) => r);
  });

  app.get('/groups/:group_id/devices/:device_id/history', {
    schema: op(
      {
        operationId: 'getDeviceHistory', summary: 'The full state of a device at an instant', tags: ['devices'], access: groupRoles(RS1, 'GetDeviceHistoryRoleRequired', 'read'), documents: PUBLIC,
        description: 'Reconstructed from the latest snapshot at or before the bound plus the history events after it. `at` (UNIX seconds, inclusive: events of that second count) and `before_id` (a history event id, strict) are mutually exclusive; without either, the current state.\n\n' +
          'The history is seen by those who see the device record (GET devices/{device_id}): a caller limited to teams reads the devices of their teams only (a device of no team: callers with the whole group). ' +
          'The state names who signed on by id (current_duty_id, driver_id, vehicle_id), whatever their teams.',
        errors: { 404: { DeviceNotFound: 'unknown device' }, 403: { ForbiddenDifferentTeam: 'the device belongs to no team of the caller (or to no team, and the caller is limited to teams)' } },
      },
      {
        params: Type.Object({ group_id: GroupId, device_id: Type.String({ minLength: 1, maxLength: 128 }) }),
        querystring: Type.Object({
          at: Type.Optional(UnixSeconds('Inclusive upper bound')),
          before_id: Type.Optional(ObjectIdString('A history event id, strict upper bound')),
        }, mutuallyExclusive('at', 'before_id')),
        response: { 200: ref(DeviceHistoryRecord) },
      },
    ),
  }, async (req) => deviceHistory(ctx.db, req.groupScope!, req.params.device_id, req.query));

  app.get('/groups/:group_id/danger-zones', {
    schema: op(
      { operationId: 'listDangerZones', summary: 'Declared danger zones', tags: ['danger-zones'], access: groupRoles([...RS6, 'admin', 'technical'], 'ListDangerZonesRoleRequired', 'read'), documents: PUBLIC },
      { params: GroupParams, querystring: Type.Object({ archived: Type.Boolean({ default: false }) }), response: { 200: Type.Array(ref(DangerZoneRecord)) } },
    ),
  }, async (req) => listZones(ctx.db, req.params.group_id, req.query));

  app.post('/groups/:group_id/danger-zones', {
    schema: op(
      { operationId: 'createDangerZone', summary: 'Declare a danger zone (a point, a radius in metres, a message for drivers)', tags: ['danger-zones'], access: groupRoles(ZONE_EDITORS, 'CreateDangerZoneRoleRequired', 'write'), documents: INTERNAL },
      { params: GroupParams, body: ref(DangerZoneBody), response: { 201: ref(DangerZoneRecord) } },
    ),
  }, async (req, reply) => reply.status(201).send(await createZone(ctx, req.params.group_id, req.body)));

  app.patch('/groups/:group_id/danger-zones/:danger_zone_id', {
    schema: op(
      { operationId: 'updateDangerZone', summary: 'Change or archive a danger zone', tags: ['danger-zones'], access: groupRoles(ZONE_EDITORS, 'UpdateDangerZoneRoleRequired', 'write'), documents: INTERNAL, errors: { 404: { DangerZoneNotFound: 'unknown zone' } } },
      { params: Type.Object({ group_id: GroupId, danger_zone_id: Type.String({ minLength: 1, maxLength: 64 }) }), body: ref(DangerZonePatch), response: { 200: ref(DangerZoneRecord) } },
    ),
  }, async (req) => updateZone(ctx, req.params.group_id, req.params.danger_zone_id, req.body));
}
