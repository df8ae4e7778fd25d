/**
 * The answer cache of the hot reads: an operation marked with `cache` in its OpMeta keeps its 200
 * answers per instance, by URL (path and query) and by the caller's standing in the group (role,
 * teams, driver record), the only inputs its handler reads besides the database. The access hook
 * still runs on every request: a cached answer is only ever given to a caller allowed to read it.
 *
 * Exact, not eventual: an answer is dropped as soon as a table it reads changes, in any instance
 * (the change feed, src/platform/db/changes.ts), and every write answered by this instance drops
 * them all before its answer leaves, so a client reading after its own write sees it. What time
 * alone changes (a trip's status as the clock passes its end) is at most CACHE_READ_TTL_MS late.
 * `x-cache: hit | stale | miss` says which one answered. A cached answer of 1 KiB or more is also kept
 * gzipped (made once, off the request path) and given so to clients that accept it: the hot lists
 * are hundreds of kilobytes of JSON, about a tenth of that gzipped.
 */
import { gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WatchedCache } from '../cache.js';
import { ANNOUNCED_TABLES } from '../db/changes.js';
import type { GroupScope } from './access.js';

/**
 * What a cached operation reads: the tables it never reads (all others count) or the only ones;
 * `clock: true` when its answer also moves with time alone (then it lives CACHE_READ_TTL_MS, else
 * NO_CLOCK_TTL_MS, a bound against a lost notification only).
 */
export type CacheReads = ({ except: readonly string[] } | { only: readonly string[] }) & { clock?: boolean };

const NO_CLOCK_TTL_MS = 60_000;
/** Longest wait for another request already reading the same answer. */
const FILL_WAIT_MS = 2_000;

/**
 * Tables written by each device report, read only through the tracking (whose own tables change
 * with them) or by the device and live views. A read marked `except: REPORT_TABLES` does not move
 * with every position.
 */
export const REPORT_TABLES = [...ANNOUNCED_TABLES, 'login_failures', 'sms_notifications'] as const;
/** The stored tracking (trip objects, stats). */
export const TRACKING_TABLES = ['trip_tracking', 'trip_tracking_stops'] as const;

interface Cached {
  /** Encoded once: a hit writes these bytes as they are. */
  payload: Buffer;
  type: string;
  /** The gzip form, made once in the background for answers of 1 KiB and more. */
  gzip?: Buffer;
}

const GZIP_FROM_BYTES = 1024;

/**
 * zlib's output chunk for a body: a sixteenth of it (what the body's gzip form rarely falls
 * under), between zlib's default 16 KiB and 1 MiB. Every chunk is a Buffer of its own: a city's
 * 12 MB trip-updates took 250 of the default size at each rebuild.
 */
const gzipChunk = (length: number) => Math.min(1 << 20, Math.max(16 << 10, 2 ** Math.ceil(Math.log2(Math.max(1, length >> 4)))));

/**
 * zlib's compression level for a body: 3 from 4 MB, else its default 6. A city's trip-updates
 * (12.7 MB of protobuf) is 4.17 MB at level 3 against 4.14 MB at 6, made in 137–172 ms against
 * 365–571 ms (gzipSync, one build on the kept city database, 2026-11-29): the feeds are gzipped at
 * every rebuild, on the cores the rebuild and the ingest share. Smaller answers compress far more
 * and cost little either way: at 3, a city's SIRI VehicleMonitoring (2.7 MB) was 154 KB on the
 * wire against 123 KB, its vehicle positions (0.6 MB) 138 KB against 124 KB. The timetable's
 * pieces are deflated at 3 (feeds/fragments.ts).
 */
const gzipLevel = (length: number) => (length >= 4 << 20 ? 3 : 6);

/** The gzip form of a body of 1 KiB or more (made in zlib's thread pool, off the event loop), else undefined. */
export function gzipped(body: Buffer): Promise<Buffer | undefined> {
  if (body.length < GZIP_FROM_BYTES) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => gzip(body, { level: gzipLevel(body.length), chunkSize: gzipChunk(body.length) }, (err, zipped) => (err ? reject(err) : resolve(zipped))));
}

/** Sends `body`, or its gzip form to a client that accepts it (the caller says Vary: Accept-Encoding). */
export function sendEncoded(req: FastifyRequest, reply: FastifyReply, body: Buffer, gzipped: Buffer | undefined) {
  if (gzipped && acceptsGzip(req.headers['accept-encoding'])) return reply.header('content-encoding', 'gzip').send(gzipped);
  return reply.send(body);
}

/** Whether an Accept-Encoding header accepts gzip (by name or `*`, with a q-value above 0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name !== 'gzip' && name !== 'x-gzip' && name !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    cache?: CacheReads;
    /** A write whose changes reach the caches by the change feed only (device reports: see below). */
    leavesCaches?: boolean;
  }
  interface FastifyRequest {
    cacheTicket?: { key: string; ticket: { generation: number; at: number } | undefined; cache: WatchedCache<Cached>; done: () => void };
  }
}

function scopeKey(s: GroupScope | null): string {
  return s ? `${s.role}\u0000${s.teams?.join(',') ?? '*'}\u0000${s.driverId ?? ''}` : '';
}

export function readCachePlugin(app: FastifyInstance): void {
  const ctx = app.ctx;
  const feed = ctx.db.changes;

  app.addHook('onRoute', (route) => {
    const reads = (route.schema as { 'x-cache'?: CacheReads } | undefined)?.['x-cache'];
    if (!reads || ctx.config.caches.readTtlMs <= 0) return;
    const ttlMs = reads.clock ? ctx.config.caches.readTtlMs : Math.max(NO_CLOCK_TTL_MS, ctx.config.caches.readTtlMs);
    const cache = new WatchedCache<Cached>(feed, feed.watch(reads), { ttlMs, max: 2_000, clock: ctx.clock });
    // One request reads an answer at a time (per key): the others wait for it rather than all
    // reading the database at once when an answer is dropped, and while an answer that only aged
    // is read again, they get the aged one (`x-cache: stale`).
    const filling = new Map<string, Promise<void>>();
    const send = (req: FastifyRequest, reply: FastifyReply, hit: Cached, state: 'hit' | 'stale') => {
      reply.header('x-cache', state).type(hit.type);
      return sendEncoded(req, reply, hit.payload, hit.gzip);
    };
    const lookup = async (req: FastifyRequest, reply: FastifyReply) => {
      if (req.method !== 'GET') return;
      const key = `${req.url}\u0000${scopeKey(req.groupScope)}\u0000${req.headers.accept ?? ''}`;
      reply.header('vary', 'Accept-Encoding');
      let found = cache.lookup(key);
      if (found?.fresh) return send(req, reply, found.value, 'hit');
      let pending = filling.get(key);
      if (found && pending) return send(req, reply, found.value, 'stale');
      if (pending) {
        await Promise.race([pending, new Promise((resolve) => setTimeout(resolve, FILL_WAIT_MS).unref())]);
        found = cache.lookup(key);
        if (found?.fresh) return send(req, reply, found.value, 'hit');
        pending = filling.get(key);
      }
      reply.header('x-cache', 'miss');
      let done!: () => void;
      const mine = new Promise<void>((resolve) => (done = resolve));
      if (!pending) filling.set(key, mine);
      req.cacheTicket = {
        key, ticket: cache.ticket(), cache,
        done: () => {
          done();
          if (filling.get(key) === mine) filling.delete(key);
        },
      };
      return undefined;
    };
    const keep = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const t = req.cacheTicket;
      if (t && reply.statusCode === 200 && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
        const entry: Cached = { payload: Buffer.isBuffer(payload) ? payload : Buffer.from(payload), type: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8') };
        t.cache.store(t.key, t.ticket, entry);
        // Made in the background: until it is there, hits go uncompressed.
        void gzipped(entry.payload).then((zipped) => (entry.gzip = zipped), () => undefined);
      }
      t?.done();
      return payload;
    };
    // Whatever happened to the request (an error answer, a client gone), its waiters go on.
    const release = async (req: FastifyRequest) => req.cacheTicket?.done();
    route.preHandler = [...[route.preHandler ?? []].flat(), lookup];
    route.onSend = [...[route.onSend ?? []].flat(), keep];
    route.onResponse = [...[route.onResponse ?? []].flat(), release];
    route.onRequestAbort = [...[route.onRequestAbort ?? []].flat(), release];
  });

  // A write answered here drops every cached value of this instance before the answer leaves (the
  // notification of its commit may arrive later than the client's next request). Device reports
  // are left to the change feed: they come by hundreds a second and touch only report tables and
  // the tracking queue, whose notifications follow within milliseconds.
  app.addHook('onSend', async (req, _reply, payload) => {
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS' && !req.routeOptions.config?.leavesCaches) feed.touchAll();
    return payload;
  });
}
