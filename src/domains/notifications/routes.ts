import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DISPATCH, RS1, groupRoles } from '../../platform/http/access.js';
import { GroupParams, Period } from '../../platform/http/params.js';
import { INTERNAL, PUBLIC, op } from '../../platform/http/route.js';
import { ref } from '../../platform/http/components.js';
import { SmsBody, SmsCount, SmsRecord } from './schemas.js';
import { countSms, sendSms } from './service.js';

export async function notificationRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  app.post('/groups/:group_id/notifications/sms', {
    schema: op(
      {
        operationId: 'sendSms', summary: 'Send an SMS notification (and record it)',
        description:
          'Records the SMS with its device and GTFS context, hands it to the configured transport (SMS_TRANSPORT: log, the default, only writes it to the service log; webhook POSTs it to SMS_WEBHOOK_URL), ' +
          'then records the outcome. Every recorded SMS is counted by GET notifications/sms-count. A caller limited to teams may only name a device of their teams.',
        tags: ['notifications'], access: groupRoles(DISPATCH, 'SendSmsRoleRequired', 'write'), documents: INTERNAL,
        errors: { 403: { ForbiddenDifferentTeam: 'the device belongs to no team of the caller' }, 502: { SmsNotSent: 'the transport refused the SMS; it is recorded as failed and the body carries it in `notification`' } },
      },
      { params: GroupParams, body: ref(SmsBody), response: { 201: ref(SmsRecord) } },
    ),
  }, async (req, reply) => reply.status(201).send(await sendSms(ctx, req.groupScope!, req.body, { by: req.principal!.userId })));

  app.get('/groups/:group_id/notifications/sms-count', {
    schema: op(
      {
        operationId: 'getSmsCount', summary: 'How many SMS notifications were sent', tags: ['notifications', 'stats'], access: groupRoles(RS1, 'GetSmsCountRoleRequired', 'read'), documents: PUBLIC,
        description: 'Counts the SMS recorded by POST notifications/sms in a month of the group\'s time zone (every month without period), for a device and a GTFS version when given. ' +
          'A caller limited to teams counts the SMS of their teams\' devices only; a device_id outside their teams answers 403 `ForbiddenDifferentTeam`, as reading that device does.',
        errors: { 403: { ForbiddenDifferentTeam: 'the device_id names a device of no team of the caller' } },
      },
      {
        params: GroupParams,
        querystring: Type.Object({
          period: Type.Optional(Period),
          device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          gtfs_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        }),
        headers: Type.Object({
          'x-svc-api-batch-id': Type.Optional(Type.String()),
          'x-svc-api-request-id': Type.Optional(Type.String()),
          'x-svc-api-lazy-loading-router': Type.Optional(Type.String()),
          'user-agent': Type.Optional(Type.String()),
        }),
        response: { 200: ref(SmsCount) },
      },
    ),
  }, async (req) => countSms(ctx.db, req.groupScope!, req.query));
}
