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
 *   times the budget (docs/operations.md).
 */
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import helmet from 'helmet';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { Config } from '../../config.js';
import { HttpError } from './errors.js';
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
  app.addHook('onRoute', (route: RouteOptions) => {
    const kind = (route.schema as { 'x-rate-limit'?: RateLimitKind } | undefined)?.['x-rate-limit'];
    if (!kind) return;
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
      new HttpError(429, 'TooManyRequests', `Too many requests: ${ctx.max} per minute allowed here. Retry after ${Math.ceil(ctx.ttl / 1000)} s.`),
  });
}
