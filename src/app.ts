/**
 * buildApp(): the platform plugins, then each domain. No listen() here: main.ts listens, tests
 * inject or listen on port 0.
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import addFormats from 'ajv-formats';
import type { Config } from './config.js';
import { systemClock, type Clock } from './platform/clock.js';
import type { AppContext, RouteEntry } from './platform/context.js';
import type { Access } from './platform/http/access.js';
import type { Db } from './platform/db/index.js';
import { HttpError, ValidationError, listedIssues } from './platform/http/errors.js';
import type { ErrorCode } from './platform/http/error-codes.js';
import { components } from './platform/http/components.js';
import { metricsPlugin } from './platform/http/metrics.js';
import { securityPlugin } from './platform/http/security.js';
import { DOCUMENTS, VERSIONS, documentBuilder, swaggerOptions, type Version } from './platform/http/openapi.js';
import { ajvFormats } from './platform/http/params.js';
import type { Document } from './platform/http/route.js';
import { readCachePlugin } from './platform/http/read-cache.js';
import { MAX_JSON_DEPTH, findNul, nestsTooDeep, toIssues } from './platform/http/validation.js';
import { objectId } from './platform/ids.js';
import { loggerOptions, logRequestLines, resolveLogFormat } from './platform/http/logging.js';
import { apiDomains, rootDomains } from './domains/index.js';
import { dutyDerivation } from './domains/duties/service.js';
import { LiveOutbox } from './domains/device/live.js';
import { FeedCache } from './domains/feeds/cache.js';
import { LiveHub } from './domains/live/hub.js';
import { TrackingRefresh } from './domains/trips/tracking.js';
import { TrackingThread, trackingOffThread } from './domains/trips/tracking-thread.js';
import { Partitions } from './platform/db/partitions.js';
import { Lifecycle } from './platform/lifecycle.js';
import { authHook } from './domains/auth/hook.js';
import { serializerFactory, type SerializerBuild } from './platform/http/serializers.js';

export interface BuildOptions {
  config: Config;
  db: Db;
  clock?: Clock;
  /** Replace the logger (tests pass false to silence it). */
  logger?: boolean;
  /** Called before any hook or route is added (the test suite checks every answer against its schema). */
  beforeRoutes?: (app: FastifyInstance) => void;
  /** When the response serializers are built (serializers.ts): at start (the default) or on each route's first answer. */
  serializers?: SerializerBuild;
}

/** /api/v2, /api/v3 and /api/v5 serve the v4 surface (spec: Versioning 1). */
export function rewriteVersion(url: string): string {
  const m = /^\/api\/v([235])(\/.*)?$/.exec(url);
  if (!m || (m[2] ?? '').startsWith('/openapi/')) return url;
  return `/api/v4${m[2] ?? ''}`;
}

export async function buildApp(o: BuildOptions): Promise<FastifyInstance> {
  const { config, db } = o;
  const logFormat = resolveLogFormat(config.logFormat);
  const app = Fastify({
    ...(o.logger === false ? { logger: false } : loggerOptions(config.logLevel, logFormat)),
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    genReqId: () => objectId(),
    rewriteUrl: (req) => rewriteVersion(req.url ?? '/'),
    exposeHeadRoutes: false,
    // Long path values reach validation (and its 422) instead of the router's bare 414.
    routerOptions: { maxParamLength: 1000 },
    frameworkErrors: (error, _req, reply) => {
      const fe = error as FastifyError;
      const status = fe.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
      void (reply as unknown as FastifyReply).status(status).send({ detail: fe.message, code: status === 414 ? 'UriTooLong' : 'BadUrl' });
    },
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    // Node bounds the receiving of every request (headers and body) by the longest wait, an upload's;
    // an ordinary body is bounded by REQUEST_TIMEOUT_SECONDS in security.ts. Only the receiving counts:
    // an answer being streamed (a CSV export) is not cut, nor a WebSocket after its upgrade.
    requestTimeout: config.timeouts.uploadMs,
    connectionTimeout: config.timeouts.idleMs,
    http: {
      requestTimeout: config.timeouts.uploadMs,
      headersTimeout: config.timeouts.requestMs,
      // How often Node checks those two bounds (its default, 30 s, is coarser than a short bound).
      connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(config.timeouts.requestMs / 4))),
    },
    schemaController: { compilersFactory: { buildSerializer: serializerFactory(o.serializers ?? 'eager') } },
    ajv: {
      customOptions: { allErrors: true, verbose: true, removeAdditional: false, coerceTypes: 'array', useDefaults: true },
      plugins: [
        [addFormats as never, { mode: 'full' }],
        // After ajv-formats: its `date` and `date-time` are replaced by ours (bounded years).
        ((ajv: { addFormat: (name: string, f: (s: string) => boolean) => unknown }) => {
          for (const [name, f] of Object.entries(ajvFormats)) ajv.addFormat(name, f);
          return ajv;
        }) as never,
      ],
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  o.beforeRoutes?.(app);
  const ctx = appContext({ config, db, clock: o.clock ?? systemClock, log: app.log });
  app.decorate('ctx', ctx);
  // What runs besides the requests (appContext below) starts once the routes are in; the live hub
  // closes before the server (its clients hear GoingAway), the rest after the last request.
  app.addHook('onReady', () => ctx.services.lifecycle.start());
  app.addHook('preClose', () => ctx.services.lifecycle.close('beforeServer'));
  app.addHook('onClose', () => ctx.services.lifecycle.close('afterServer'));
  app.decorateRequest('principal', null);
  app.decorateRequest('groupScope', null);

  const routeTable: RouteEntry[] = [];
  app.decorate('routeTable', routeTable);
  app.addHook('onRoute', (route) => {
    // The access list lives in the schema (so it is documented) and is enforced from the config.
    const access = (route.schema as { 'x-access'?: Access } | undefined)?.['x-access'];
    if (access) route.config = { ...(route.config as object), access } as typeof route.config;
    for (const method of [route.method].flat()) routeTable.push({ method, url: route.url, access, schema: route.schema as Record<string, unknown> | undefined });
  });
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  if (o.logger !== false && logFormat === 'pretty') logRequestLines(app);
  app.addHook('preValidation', async (req) => {
    const loc = findNul(req.params, ['path']) ?? findNul(req.query, ['query']) ?? findNul(req.body, ['body']);
    if (loc) throw new ValidationError([{ loc, msg: 'contains a NUL character (\\u0000), which text values cannot hold', type: 'string_nul' }]);
  });

  app.setErrorHandler((error: FastifyError | HttpError | ValidationError, req, reply) => {
    if ('validation' in error && error.validation) {
      return reply.status(422).send({ detail: listedIssues(toIssues(error.validation, error.validationContext)) });
    }
    if (error instanceof ValidationError) return reply.status(422).send({ detail: listedIssues(error.issues) });
    if (error instanceof HttpError) {
      if (error.status >= 500 && error.status !== 501 && error.status !== 503) req.log.error({ err: error }, 'server error');
      return reply.status(error.status).headers(error.headers).send(error.body());
    }
    const fe = error as FastifyError;
    if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (fe.statusCode === 400 && fe instanceof SyntaxError)) {
      return reply.status(422).send({ detail: [{ loc: ['body'], msg: `JSON decode error: ${fe.message}`, type: 'json_invalid' }] });
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      const code = FASTIFY_CODES[fe.code] ?? 'BadRequest';
      return reply.status(fe.statusCode).send({ detail: fe.message, code });
    }
    req.log.error({ err: error }, 'unexpected error');
    return reply.status(500).send({ detail: 'Internal server error', code: 'InternalError', request_id: req.id });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send({ detail: `No route ${req.method} ${req.url}`, code: 'RouteNotFound' });
  });

  await securityPlugin(app, config);
  await app.register(cookie);
  // Before the access hook: it reads req.ws (set by this plugin) to let a WebSocket route check its
  // credential after the upgrade. Client messages are small ({"session_id": …}).
  await app.register(websocket, { options: { maxPayload: 4096 } });
  // After the cookie plugin: its onRequest hook must parse cookies before credentials are read.
  app.addHook('onRequest', authHook);
  readCachePlugin(app);
  await app.register(formbody);
  // Fastify's JSON parser, behind a bound on nesting (issue #15).
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (nestsTooDeep(body as string)) return done(new ValidationError([{ loc: ['body'], msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, type: 'json_invalid' }]), undefined);
    json(req, body as string, done);
  });
  // CSV request bodies (imports, planning files) arrive as text; each route reads them with readCsv.
  app.addContentTypeParser('text/csv', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  // The named records (components.ts): shared by validation, serialization and the documents.
  for (const schema of components()) app.addSchema(schema);
  await app.register(swagger, swaggerOptions('v4') as never);
  await app.register(metricsPlugin);

  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/ready', { schema: { hide: true } }, async (_req, reply) => {
    try {
      await db.query('SELECT 1');
      return { status: 'ready', database: db.kind };
    } catch {
      return reply.status(503).send({ detail: 'The database is not reachable', code: 'DatabaseUnavailable' });
    }
  });

  const documents = documentBuilder(app);
  app.get<{ Params: { version: Version; document: string } }>(
    '/api/:version/openapi/:document',
    {
      schema: {
        hide: true,
        params: {
          type: 'object',
          properties: { version: { type: 'string', enum: [...VERSIONS] }, document: { type: 'string', enum: DOCUMENTS.map((d) => `${d}.json`) } },
          required: ['version', 'document'],
        },
      },
    },
    async (req) => documents(req.params.version, req.params.document.replace(/\.json$/, '') as Document),
  );
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'none', deepLinking: true, defaultModelsExpandDepth: 0, validatorUrl: null },
    // swagger-ui's own policy (its files, its inline style hashes), replacing the global one.
    staticCSP: true,
    transformStaticCSP: (header: string) => header.replace(/\s*upgrade-insecure-requests;?/, ''),
    transformSpecification: () => documents('v4', 'internal'),
    transformSpecificationClone: false,
  });

  for (const domain of apiDomains) await app.register(domain, { prefix: '/api/v4' });
  for (const domain of rootDomains) await app.register(domain);

  return app;
}

/**
 * The context every service receives, with what runs in the app besides its requests: each an
 * object made here, in start order (closed in reverse order). The CLI makes one too (main.ts) and
 * closes it after its command.
 */
export function appContext(base: Omit<AppContext, 'services'>): AppContext {
  const { config, db, log } = base;
  const lifecycle = new Lifecycle();
  const ctx: AppContext = { ...base, services: { lifecycle } as AppContext['services'] };
  // The change feed of the database handle (LISTEN): caches drop what changed. Closed with the Db.
  lifecycle.add('change feed', { start: () => db.changes.start(), close: async () => {} });
  // The time partitions of the raw reports, made ahead and dropped after retention; the app is ready once today's exist.
  ctx.services.partitions = lifecycle.add('partition maintenance', new Partitions({
    db, clock: base.clock, settings: config.partitions,
    onError: (err) => log.warn({ err }, 'partition maintenance failed; it runs again next round'),
    onRound: (r) => (r.created.length + r.dropped.length > 0 ? log.info({ created: r.created, dropped: r.dropped }, 'report partitions') : undefined),
  }));
  // Trip tracking recomputed after each device batch, and the worker catching up what was left dirty
  // (on a thread of its own on PostgreSQL: TRACKING_WORKER).
  ctx.services.tracking = lifecycle.add('tracking refresh and worker', trackingOffThread(config, db) ? new TrackingThread(ctx) : new TrackingRefresh(ctx));
  // The duties derived from sign events, asked by device ingest in its transaction (nothing runs).
  ctx.services.duties = dutyDerivation;
  // Device reports published on the live channel (NOTIFY), a window at a time.
  ctx.services.outbox = lifecycle.add('live outbox', new LiveOutbox(ctx));
  // The live stream's hub: this instance's WebSocket clients, fed from the live channel (LISTEN).
  ctx.services.live = lifecycle.add('live hub', new LiveHub(ctx, { maxBufferedBytes: config.live.maxBufferedBytes, heartbeatMs: config.live.heartbeatMs, batchMs: config.live.batchMs }));
  // The passenger feeds' snapshots (GTFS-Realtime, SIRI), rebuilt in the background when stale.
  ctx.services.feeds = lifecycle.add('feed snapshots', new FeedCache(ctx));
  return ctx;
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PayloadTooLarge',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UnsupportedMediaType',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'EmptyBody',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'InvalidContentLength',
};
