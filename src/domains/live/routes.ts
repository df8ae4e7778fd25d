/** The live stream (spec: Events 1): a WebSocket per client, fed by this instance's hub. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Socket } from 'node:net';
import { Type } from 'typebox';
import type { WebSocket } from 'ws';
import { DEFAULT_BATCH_MS } from '../../config.js';
import { OFFICE, type Access, type Principal } from '../../platform/http/access.js';
import { ErrorBody, errors, fail, HttpError } from '../../platform/http/errors.js';
import { ref } from '../../platform/http/components.js';
import { GroupParams } from '../../platform/http/params.js';
import { INTERNAL, op } from '../../platform/http/route.js';
import { authenticate } from '../auth/hook.js';
import { authorizeGroup, principalFromSession, principalNow } from '../auth/service.js';
import { envelope } from './hub.js';
import { CLOSE, CONTROL_TYPES, DEVICE_MESSAGE_TYPES, LiveMessage, LiveQuery, type Envelope } from './schemas.js';

const ACCESS: Extract<Access, { kind: 'group' }> = { kind: 'group', roles: OFFICE, roleError: 'SubscribeEventsRoleRequired', scope: 'read', checkedAfterUpgrade: true };

/**
 * A browser may open the stream only from an allowed origin (cross-site WebSocket hijacking).
 * The service's own pages (the live network page, /live) are same-origin: an Origin whose host
 * is the request's Host is accepted.
 */
export function originAllowed(origin: string | undefined, allowed: readonly string[], publicUrl: string | undefined, host?: string): boolean {
  if (origin === undefined) return true;
  if (allowed.includes('*') || allowed.includes(origin)) return true;
  if (host !== undefined && URL.canParse(origin) && new URL(origin).host === host) return true;
  return publicUrl !== undefined && new URL(publicUrl).origin === origin;
}

export async function liveRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;
  const settings = ctx.config.live;
  // This app's hub (a service of buildApp, closed before the server so its clients hear GoingAway).
  const hub = ctx.services.live;

  const deviceTypes = Object.entries(DEVICE_MESSAGE_TYPES).map(([item, message]) => `\`${message}\` (device report \`${item}\`)`).join(', ');
  const description = [
    'Upgrade this URL to a WebSocket (`wss://…/api/v4/groups/{group_id}/events/op/subscribe`); the server pushes messages, each a JSON envelope `{"type", "group_id", "at", "data"}` (LiveMessage).',
    `**Frames**: by default each text frame is a JSON **array** of one or more envelopes, in order: the messages of a window of LIVE_BATCH_MS (default ${DEFAULT_BATCH_MS} ms; \`subscribed\` says it in \`batch_ms\`), sent together so that a busy network costs a client a few frames a second instead of one per message (1,000 vehicles reporting every 5 s: 200 messages a second). ` +
      'The windows of the clients are staggered (each client receives what came since its previous frame, at most every LIVE_BATCH_MS; the clients of an instance take turns), and the items of one device report come in one frame. ' +
      'Read a frame as `JSON.parse(text)` and handle each element. The control messages `subscribed` and `error` come alone in their array. ' +
      'With `?batch=false` each text frame holds one envelope (an object, not an array); the messages still wait for the end of the window and leave in one write.',
    '**Credential**: the Authorization header (`Bearer <session_id or JWT>`, `Api-Key <key>`), `x-api-key`, or the `session_id` cookie, at connection; or else a first message `{"session_id": "…"}` within LIVE_AUTH_TIMEOUT_SECONDS (default 5). ' +
      'Once authorised, the first message received is `subscribed` (`data`: role, teams, heartbeat_seconds, max_buffered_bytes, batch_ms: the window, null with `batch=false`); nothing stored before it is sent.',
    `**Close codes** (the close reason is the error name; an \`error\` message with \`{code, detail}\` precedes the close): ${CLOSE.unauthenticated} \`Unauthenticated\` (no credential in time, a first message that is not \`{"session_id": "…"}\`, an invalid, expired or revoked credential); ` +
      `${CLOSE.forbidden} \`NoRole\`, \`SubscribeEventsRoleRequired\`, \`ScopeNotAllowed\` or \`Auth0LoginRequired\`; ${CLOSE.groupNotFound} \`GroupNotFound\`; ` +
      `${CLOSE.slowClient} \`SlowClient\` (more than LIVE_MAX_BUFFERED_BYTES, default 1 MiB, of messages not yet read: the client is closed, not buffered for); ${CLOSE.goingAway} \`GoingAway\` (the instance stops: reconnect); ${CLOSE.internalError} on an unexpected failure.`,
    '**Origin**: a request with an Origin header not listed in LIVE_ALLOWED_ORIGINS (nor PUBLIC_URL\'s origin, nor the service\'s own origin: the host of the Host header) is refused before the upgrade with HTTP 403 `OriginNotAllowed`. Requests without Origin (not browsers) are accepted.',
    `**Messages**: ${deviceTypes}; \`trip_update\` (an operator recorded, ended early or removed a trip update); control messages ${CONTROL_TYPES.map((c) => `\`${c}\``).join(', ')}. ` +
      'Device messages carry the report item as the device sent it (less `type` and `at`) with `device_id`, `duty_id`, `driver_id` and `vehicle_id`: the duty open on the device at the item\'s time, else the device\'s provisioned vehicle. ' +
      '`at` is the item\'s time; for `trip_update`, the time of the operator action, and `data` is `{action: put|ended|removed, update: <TripUpdateRecord>}`. Late or replayed reports are pushed when stored (their `at` tells); duplicates are not pushed again.',
    '**Team scope**: a client limited to teams receives a device message when the driver or the vehicle of the duty (without a duty: the device\'s team or its vehicle\'s) belongs to one of its teams; a message attributed to no team reaches only clients with the whole group. ' +
      'Trip updates concern the network and reach every client of the group. Attribution is cached per instance for up to 60 s, so a change of a vehicle\'s or a driver\'s teams reaches the stream within a minute.',
    '**Standing kept current**: an open stream keeps only the access its credential still has. When a membership, a session, an API key, a user or a group changes (through any instance) the standing of every open stream is computed again within seconds, as at subscription: ' +
      `no role left in the group (DELETE /groups/{group_id}/users/{user_id}) or a role no longer allowed closes the stream with ${CLOSE.forbidden} and the error name as reason (\`NoRole\`, \`SubscribeEventsRoleRequired\`…); a group deleted, ${CLOSE.groupNotFound}; ` +
      'a change of the user\'s teams (PATCH /groups/{group_id}/users/{user_id}) or role re-filters the open stream from its next window, without a message and without closing (the `subscribed` message tells the teams at subscription only): messages about a team no longer the client\'s are not delivered.',
    '**Heartbeat**: the server pings every LIVE_HEARTBEAT_SECONDS (default 30); a client that has not answered the previous ping with a pong (WebSocket clients do it by themselves) is cut. ' +
      'At each heartbeat, and within seconds of a logout or a revocation, the session or API key of each stream is checked again: a logout, an expired session or a revoked key closes the stream with 4401, as does a JWT past its `exp` (at the first heartbeat after it); a superuser flag removed from the account (or from the creator of the key) is followed like a role (the user\'s role and teams are followed as above). Messages a client sends after its credential are ignored (at most 4096 bytes each).',
    '**Several instances**: each instance LISTENs once on the database channel and fans out to its own clients, so a report stored through any instance reaches the clients of all. Without the upgrade, this URL answers 426 `UpgradeRequired`.',
  ].join('\n\n');

  app.route({
    method: 'GET',
    url: '/groups/:group_id/events/op/subscribe',
    schema: op(
      {
        operationId: 'subscribeEvents', summary: 'The live stream (WebSocket): positions, trip events, duties, trip updates, device state',
        description, tags: ['events'], access: ACCESS, documents: INTERNAL,
        errors: { 403: { OriginNotAllowed: 'the Origin header is not an allowed origin (before the upgrade)' } },
      },
      {
        params: GroupParams,
        querystring: LiveQuery,
        response: {
          101: { description: 'Switching Protocols: the stream is open; frames hold an array of LiveMessage (one LiveMessage with `batch=false`).', content: { 'application/json': { schema: Type.Array(LiveMessage) } } },
          426: { description: '`UpgradeRequired`: a plain HTTP request; open the URL as a WebSocket', content: { 'application/json': { schema: ref(ErrorBody) } } },
        },
      },
    ),
    onRequest: async (req) => {
      if (!originAllowed(req.headers.origin, settings.allowedOrigins, ctx.config.publicUrl, req.headers.host)) {
        throw errors.forbidden('OriginNotAllowed', `Origin ${JSON.stringify(req.headers.origin)} may not open the live stream (LIVE_ALLOWED_ORIGINS)`);
      }
    },
    handler: async () => {
      throw fail('UpgradeRequired', 'Open this URL as a WebSocket (Upgrade: websocket)', { upgrade: 'websocket' });
    },
    wsHandler: (socket: WebSocket, req: FastifyRequest) => {
      const groupId = (req.params as { group_id: string }).group_id;
      const batch = (req.query as LiveQuery).batch !== false;
      const frame = (e: Envelope) => JSON.stringify(batch ? [e] : e);
      // Listen at once: a first message sent right after the handshake must not be missed.
      const firstMessage = new Promise<string | null>((resolve) => {
        const timer = setTimeout(() => resolve(null), settings.authTimeoutMs);
        socket.once('message', (data, isBinary) => {
          clearTimeout(timer);
          resolve(isBinary ? '' : String(data));
        });
        socket.once('close', () => clearTimeout(timer));
      });
      const fail = (err: unknown) => {
        const e = err instanceof HttpError ? err : null;
        if (!e) req.log.error({ err }, 'live stream failed');
        const code = e?.status === 401 ? CLOSE.unauthenticated : e?.status === 403 ? CLOSE.forbidden : e?.status === 404 ? CLOSE.groupNotFound : CLOSE.internalError;
        const name = e?.code ?? 'InternalError';
        if (socket.readyState === socket.OPEN) {
          socket.send(frame(envelope('error', groupId, ctx.clock.now(), { code: name, detail: e?.message ?? 'Internal server error' })));
          socket.close(code, name);
        }
      };
      const join = async (principal: Principal) => {
        const scope = await authorizeGroup(ctx, principal, groupId, ACCESS);
        req.principal = principal;
        req.groupScope = scope;
        // The hub runs the same check again whenever memberships or credentials change, with the
        // credential's principal as it is now (a superuser flag removed, a JWT expired).
        const standing = async () => {
          const now = await principalNow(ctx, principal);
          if (!now) throw errors.unauthenticated('The session ended, the API key was revoked, or the token expired');
          return authorizeGroup(ctx, now, groupId, ACCESS);
        };
        await hub.subscribe(socket, scope, principal, (req.raw.socket as Socket | undefined) ?? null, batch, standing);
      };
      void (async () => {
        const atConnection = await authenticate(req);
        if (atConnection) return join(atConnection);
        const text = await firstMessage;
        if (text === null) throw errors.unauthenticated(`No credential: send {"session_id": "…"} within ${settings.authTimeoutMs / 1000} s, or a credential at connection`);
        if (socket.readyState !== socket.OPEN) return;
        return join(await principalOfFirstMessage(text));
      })().catch(fail);

      async function principalOfFirstMessage(text: string): Promise<Principal> {
        let sessionId: unknown;
        try {
          sessionId = (JSON.parse(text) as { session_id?: unknown } | null)?.session_id;
        } catch {
          sessionId = undefined;
        }
        if (typeof sessionId !== 'string' || sessionId === '') throw errors.unauthenticated('The first message must be {"session_id": "<session_id>"}');
        const p = await principalFromSession(ctx, sessionId);
        if (!p) throw errors.unauthenticated('The session is invalid, expired or closed');
        return p;
      }
    },
  });
}
