/**
 * What every answer carries against abuse, in one place:
 * - security headers (helmet): a Content-Security-Policy of `'self'` only (no inline script, no
 *   third-party origin: the /docs and /live pages ship their own files), nosniff, frame-ancestors
 *   none, no referrer across origins, HSTS (ignored by browsers on plain http);
 * - CORS: only the origins of CORS_ALLOWED_ORIGINS get cross-origin access (with credentials);
 *   any other origin gets no CORS header, so a browser keeps the answer from the page;
 * - rate limits on the operations that invite guessing or heavy reads: login (per client address),
 *   API key creation and CSV exports (per caller), answered 429 TooManyRequests with Retry-After.
 *   The counters live in the memory of each instance: behind N instances a client gets up to N
 *   times the budget (docs/operations.md);
 * - Cache-Control: the answers of login and login-scoped (a session id) and every answer of an
 *   operation that takes a credential (any access but public, errors included) carry
 *   `Cache-Control: no-store`: no browser or proxy keeps what one caller was shown. An authenticated
 *   answer that carries its own ETag keeps revalidation instead, as `private, no-cache` (stored by
 *   the caller's browser only, checked before each use). Public operations (the GTFS-RT and SIRI
 *   feeds: the same answer for everyone, no credential read) keep their own `public, max-age`,
 *   ETag and Last-Modified;
 * - timeouts on what a client sends: an ordinary request's body must arrive within
 *   REQUEST_TIMEOUT_SECONDS of its headers (bodyTimeout below: 408 RequestTimeout, the connection
 *   closed), its headers too (Node's headersTimeout); an upload (a route accepting more than
 *   BODY_LIMIT_BYTES, or a zip or multipart body) has UPLOAD_TIMEOUT_SECONDS for all of it (Node's requestTimeout, app.ts). A
 *   connection idle for IDLE_TIMEOUT_SECONDS (nothing sent, nothing read) is closed. None bounds an
 *   answer being written (CSV exports stream for as long as the client reads) nor a WebSocket
 *   after its upgrade (ws clears the socket's timeout; Node's request bounds end with the upgrade).
 */
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import helmet from 'helmet';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { Config } from '../../config.js';
import { fail } from './errors.js';
import type { RateLimitKind } from './route.js';

/** The policy of every page and answer; swagger-ui's /docs sets its own, stricter-for-it one. */
export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  baseUri: ["'self'"],
  connectSrc: ["'self'"],
  fontSrc: ["'self'", 'data:'],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  imgSrc: ["'self'", 'data:'],
  objectSrc: ["'none'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  // Not upgrade-insecure-requests: the service is often reached on plain http (localhost, a
  // private network behind a TLS-terminating proxy), where upgrading would break every page.
  upgradeInsecureRequests: null,
};

const WINDOW_MS = 60_000;

/** Request bodies handed to the handler as a stream. */
const STREAMED_BODIES = ['application/zip', 'application/x-zip-compressed', 'application/octet-stream', 'multipart/form-data'];

/** The headers helmet sets with our policy, read off one run of its middleware. */
export function securityHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: string | number | readonly string[]) => {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader: (name: string) => {
      delete headers[name.toLowerCase()];
    },
  };
  let failure: unknown;
  helmet({ contentSecurityPolicy: { directives: CONTENT_SECURITY_POLICY }, referrerPolicy: { policy: 'no-referrer' } })(
    {} as never,
    res as never,
    (err?: unknown) => {
      failure = err;
    },
  );
  if (failure) throw failure;
  return headers;
}

/** The client address for `login`, the caller for the others (an anonymous caller is its address). */
function keyOf(kind: RateLimitKind, req: FastifyRequest): string {
  if (kind === 'login') return `login:${req.ip}`;
  const p = req.principal;
  const who = p ? (p.apiKeyId ? `key:${p.apiKeyId}` : `user:${p.userId ?? p.sessionHash ?? 'anon'}`) : `ip:${req.ip}`;
  return `${kind}:${who}`;
}

export async function securityPlugin(app: FastifyInstance, config: Config): Promise<void> {
  // Before the plugins below register their own onRoute hooks: the limit of a route is read from
  // the `x-rate-limit` that op() put in its schema.
  // Public operations whose answers are credentials: the `login` rate-limit kind (login, login-scoped).
  const noStore = new Set<string>();
  // Uploads: a body larger than BODY_LIMIT_BYTES, or one the handler reads as a stream (zip, multipart).
  const uploads = new Set<string>();
  app.addHook('onRoute', (route: RouteOptions) => {
    const consumes = (route.schema as { consumes?: string[] } | undefined)?.consumes ?? [];
    if ((route.bodyLimit ?? 0) > config.bodyLimitBytes || consumes.some((t) => STREAMED_BODIES.includes(t))) {
      for (const method of [route.method].flat()) uploads.add(`${method} ${route.url}`);
    }
    const kind = (route.schema as { 'x-rate-limit'?: RateLimitKind } | undefined)?.['x-rate-limit'];
    if (!kind) return;
    if (kind === 'login') noStore.add(route.url);
    route.config = {
      ...(route.config as object),
      rateLimit: { max: config.rateLimits[kind], timeWindow: WINDOW_MS, keyGenerator: (req: FastifyRequest) => keyOf(kind, req) },
    } as typeof route.config;
  });

  // helmet's headers do not depend on the request: computed once, set on every answer (the
  // Fastify plugin rebuilt them per request, a tenth of the cost of a cached read).
  const headers = securityHeaders();
  app.addHook('onRequest', (_req, reply, done) => {
    reply.headers(headers);
    done();
  });
  app.addHook('onSend', (req, reply, payload, done) => {
    const access = req.routeOptions.config.access;
    if (access && (access.kind !== 'public' || noStore.has(req.routeOptions.url ?? ''))) {
      reply.header('cache-control', reply.hasHeader('etag') ? 'private, no-cache' : 'no-store');
    }
    done(null, payload);
  });

  bodyTimeout(app, config, uploads);

  const allowed = new Set(config.corsAllowedOrigins);
  await app.register(cors, {
    origin: (origin, cb) => cb(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: ['Link', 'ETag', 'Last-Modified', 'Retry-After', 'X-Request-Id', 'Content-Disposition'],
    maxAge: 600,
  });

  await app.register(rateLimit, {
    global: false,
    // Runs after the auth hook (a route-level hook), so the caller is known.
    hook: 'preHandler',
    errorResponseBuilder: (_req, ctx) =>
      fail('TooManyRequests', `Too many requests: ${ctx.max} per minute allowed here. Retry after ${Math.ceil(ctx.ttl / 1000)} s.`),
  });
}

/**
 * An ordinary body that has not fully arrived REQUEST_TIMEOUT_SECONDS after its headers: the
 * client is answered 408 and the connection closed, as Node does for its own bounds (a slow body
 * would otherwise hold a connection and a parser for as long as the client likes). Uploads are
 * left to Node's requestTimeout (UPLOAD_TIMEOUT_SECONDS), the handler reading their stream.
 */
function bodyTimeout(app: FastifyInstance, config: Config, uploads: ReadonlySet<string>): void {
  const ms = config.timeouts.requestMs;
  const detail = `The request body did not arrive within ${ms / 1000} s (REQUEST_TIMEOUT_SECONDS)`;
  // Written on the socket, past Fastify: the headers every other answer carries are written here.
  const headers = Object.entries({ ...securityHeaders(), 'cache-control': 'no-store' }).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  const answer = (requestId: string) => {
    const body = JSON.stringify({ detail, code: 'RequestTimeout' });
    return `HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n${headers}x-request-id: ${requestId}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };
  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw;
    const sendsBody = raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0;
    if (sendsBody && !raw.complete && !uploads.has(`${req.method} ${req.routeOptions.url ?? ''}`)) {
      const timer = setTimeout(() => {
        const socket = raw.socket as Socket | null;
        if (raw.complete || reply.raw.headersSent || !socket || socket.destroyed) return;
        req.log.info({ timeout_ms: ms }, 'request body timed out');
        socket.write(answer(String(req.id)));
        socket.destroySoon();
      }, ms);
      timer.unref();
      const clear = () => clearTimeout(timer);
      raw.once('end', clear);
      raw.once('close', clear);
      reply.raw.once('finish', clear);
    }
    done();
  });
}
