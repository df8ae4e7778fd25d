import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { RS1, groupRoles } from '../../platform/http/access.js';
import { GroupParams, Period } from '../../platform/http/params.js';
import { AnyRecord, PUBLIC, notImplemented, op } from '../../platform/http/route.js';

const SMS = 'issue #5, resources and planning';

export async function notificationRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/groups/:group_id/notifications/sms-count', {
    schema: op(
      { operationId: 'getSmsCount', summary: 'How many SMS notifications were sent', tags: ['notifications', 'stats'], access: groupRoles(RS1, 'GetSmsCountRoleRequired', 'read'), documents: PUBLIC, notImplemented: SMS },
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
        response: { 200: AnyRecord },
      },
    ),
  }, notImplemented(SMS));
}
