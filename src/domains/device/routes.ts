/**
 * The device API: what driver applications call (internal document, tag device-api): the reports
 * here; the duty open on the device and the danger zones around it are served by duties
 * (duties/routes.ts), with the same credential (credential.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { GroupParams } from '../../platform/http/params.js';
import { INTERNAL, op } from '../../platform/http/route.js';
import { DEVICE, deviceOf, reportErrors } from './credential.js';
import { BatchAnswer, DEVICE_STATE_MAX_BYTES, DEVICE_STATE_MAX_FIELDS, DEVICE_STATE_MAX_NAME, DEVICE_STATE_MAX_TEXT, DeviceReportBatch, ITEM_SCHEMAS, MAX_BATCH, ReportBatch } from './schemas.js';
import { ref } from '../../platform/http/components.js';
import { ingestBatch } from './ingest.js';
import { PARTITIONS_AHEAD_DAYS } from '../../platform/db/partitions.js';

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
          `A batch of at most ${MAX_BATCH} items is stored atomically (all its valid items or none). Each item is checked against its own schema (item types: ${Object.keys(ITEM_SCHEMAS).join(', ')}; each is a component of this document, ` +
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
}
