/** The device API: what driver applications call (internal document, tag device-api). */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { groupRoles, type Principal } from '../../platform/http/access.js';
import { errors } from '../../platform/http/errors.js';
import { GroupParams, Nullable } from '../../platform/http/params.js';
import { INTERNAL, op } from '../../platform/http/route.js';
import { DangerZoneNear } from '../duties/schemas.js';
import { currentDuty, zonesAround } from '../duties/service.js';
import { BatchAnswer, DEVICE_STATE_MAX_BYTES, DEVICE_STATE_MAX_FIELDS, DEVICE_STATE_MAX_NAME, DEVICE_STATE_MAX_TEXT, DeviceReportBatch, DutyRecord, ITEM_SCHEMAS, MAX_BATCH, ReportBatch } from './schemas.js';
import { ref } from '../../platform/http/components.js';
import { ingestBatch } from './ingest.js';
import { PARTITIONS_AHEAD_DAYS } from '../../platform/db/partitions.js';

const DEVICE = groupRoles(['driver'], 'DeviceApiRoleRequired', 'device');
const deviceErrors = { 403: { DeviceCredentialRequired: 'the credential is not bound to a device of this group (a driver session opened with device_id, or a device API key)' } };
const reportErrors = {
  ...deviceErrors,
  503: { PartitionBusy: 'the time partition the reports need (an old backlog) could not be made within 5 s; nothing was stored: send the batch again after the Retry-After header\'s seconds' },
};

/** spec-adjacent: a device can only write as itself, in its own group. */
function deviceOf(principal: Principal | null, groupId: string): string {
  if (!principal?.device || principal.device.groupId !== groupId) {
    throw errors.forbidden('DeviceCredentialRequired', 'Use a driver session opened with POST /login?device_id=… or a device API key of this group');
  }
  return principal.device.deviceId;
}

export async function deviceRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  app.post('/groups/:group_id/device/reports', {
    bodyLimit: 4 * 1024 * 1024,
    config: { leavesCaches: true },
    schema: op(
      {
        operationId: 'postDeviceReports',
        summary: 'Send a batch of reports (sign-on, sign-off, trips, trip events, positions, passenger counts, device state, vehicle movements)',
        description: [
          `A batch of at most ${MAX_BATCH} items is one transaction. Each item is checked against its own schema (item types: ${Object.keys(ITEM_SCHEMAS).join(', ')}; each is a component of this document, ` +
            'and `DeviceReportItem` is their union, told apart by `type`); an invalid item is rejected alone, with its reasons, and the valid ones are stored: read `rejected` and `complete`.',
          'Each item has a client-generated UUID: an item sent again (a retry after a timeout, a replayed backlog) is acknowledged in `duplicates` and never stored twice ' +
            '(positions, trip events and passenger counts are recognised by their id and time: send a retried item unchanged).',
          `Trip reports (trip_start, trip_end, trip_event, position, passenger_count) dated more than ${PARTITIONS_AHEAD_DAYS} days ahead of the service's clock, or older than the days ` +
            'positions are kept (POSITIONS_RETENTION_DAYS, default 90; their trip\'s tracking is final), are rejected alone at `at`.',
          'Items may be late and out of order: duties are derived from the sign-on and sign-off times, and the latest state of the device only moves forward in event time.',
          `A \`device_state\` item names at most ${DEVICE_STATE_MAX_FIELDS} fields, of 1 to ${DEVICE_STATE_MAX_NAME} characters, text values of at most ${DEVICE_STATE_MAX_TEXT} characters; the state it is merged into may hold at most ${DEVICE_STATE_MAX_FIELDS} fields and ${DEVICE_STATE_MAX_BYTES} bytes of JSON ` +
            '(a late item counts as adding its fields, removing none). An item over a bound is rejected alone, its error naming the bound; remove fields by setting them to null.',
          'The device is the one the credential is bound to.',
        ].join('\n\n'),
        tags: ['device-api'], access: DEVICE, documents: INTERNAL, errors: reportErrors, documentedBody: ref(DeviceReportBatch),
      },
      { params: GroupParams, body: ReportBatch, response: { 200: ref(BatchAnswer) } },
    ),
  }, async (req) => {
    const deviceId = deviceOf(req.principal, req.params.group_id);
    const { answer, touchedTrips } = await ingestBatch(ctx, req.params.group_id, deviceId, req.body.items);
    ctx.services.tracking.refreshSoon(req.params.group_id, touchedTrips);
    return answer;
  });

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
}
