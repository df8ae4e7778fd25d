/**
 * Passenger information is served from a per-group snapshot of the network (network.ts), shared
 * by GTFS-Realtime and SIRI, stale-while-revalidate:
 *
 * - A feed request is answered from the last built snapshot at once; it never waits for a
 *   rebuild. The header timestamp (GTFS-RT) and ResponseTimestamp (SIRI) are the snapshot's build
 *   time, and the answer's Age header says how old it is, in seconds.
 * - A snapshot older than the refresh interval (FEEDS_REFRESH_SECONDS) is stale: the request that
 *   finds it so starts one rebuild of the group in the background (one at a time per group, shared
 *   by every feed), and is answered from the stale one. The rebuild reads the whole network again
 *   (set-based, see networkNow), builds every output asked for lately, then replaces the snapshot.
 *   A failed rebuild is logged and tried again one interval later; the last snapshot stays.
 * - The first request for a group (none built yet in this instance) waits for the first build.
 *
 * An output of 1 KiB or more is also gzipped once, when it is built (off the event loop), and given
 * so to clients that accept it (a city's SIRI EstimatedTimetable is megabytes of XML, a tenth of
 * that gzipped).
 *
 * Outputs carry a weak ETag (a hash of their content without the production timestamps) and a
 * Last-Modified (when that content last changed), so a client polling an unchanged feed gets
 * 304 Not Modified.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../platform/context.js';
import type { Service } from '../../platform/lifecycle.js';
import { gzipped, sendEncoded } from '../../platform/http/read-cache.js';
import { nextTurn } from '../../platform/slices.js';
import { scheduleMemoOf } from '../gtfs/schedule-memo.js';
import { networkNow, type NetworkNow } from './network.js';

export interface Output {
  body: Buffer;
  /** The gzip form (of an output of 1 KiB or more). */
  gzip: Buffer | undefined;
  contentType: string;
  /** Weak ETag of the content (timestamps of production excluded). */
  etag: string;
  /** When the content last changed. */
  lastModified: Date;
  /** The snapshot it was built from. */
  net: NetworkNow;
  /** What the recipe kept for its next build (Built.state). */
  state: unknown;
}

export interface Built {
  body: Buffer;
  contentType: string;
  /** What identifies the content: equal fingerprints, same content. */
  fingerprint: Buffer | string;
  /** The gzip form when the recipe made it (from kept pieces: fragments.ts); else made from the body. */
  gzip?: Buffer;
  /** Kept for the recipe's next build of this output, which receives it (the pieces it can reuse). */
  state?: unknown;
}

/** Builds an output from a snapshot; `state` is what its previous build of the same output kept (undefined at first). */
export type Recipe = (net: NetworkNow, state: unknown) => Built | Promise<Built>;

/** Outputs per group rebuilt with each snapshot: the most recently asked for (others are built on request). */
const KEPT_OUTPUTS = 64;

interface GroupFeeds {
  /** The last built snapshot. */
  net: NetworkNow | undefined;
  /** The rebuild under way, if any (at most one per group). */
  building: Promise<NetworkNow> | undefined;
  /** No background rebuild before this time (ms, service clock): set after a failed one. */
  retryAt: number;
  /** The outputs asked for, most recent last, with the last one built. */
  outputs: Map<string, { recipe: Recipe; out: Output | undefined }>;
}

/** The feed snapshots of an app (a service of buildApp; tests reach its `pause` seam as ctx.services.feeds). */
export class FeedCache implements Service {
  private readonly groups = new Map<string, GroupFeeds>();
  private readonly running = new Set<Promise<unknown>>();
  /**
   * Test seam: awaited in the middle of every rebuild (after the trips are read, before the
   * vehicles are), so a test can hold a rebuild while it reads the feeds and reports positions.
   */
  pause: ((groupId: string) => Promise<void>) | undefined;

  constructor(private readonly ctx: AppContext) {}

  private get refreshMs() {
    return this.ctx.config.feeds.refreshSeconds * 1000;
  }

  private group(groupId: string): GroupFeeds {
    let g = this.groups.get(groupId);
    if (!g) this.groups.set(groupId, (g = { net: undefined, building: undefined, retryAt: 0, outputs: new Map() }));
    return g;
  }

  /**
   * The group's last built snapshot, at once; when it is stale, a rebuild starts in the background.
   * Before the first build, the first build (started, or joined).
   */
  snapshot(groupId: string): Promise<NetworkNow> {
    const g = this.group(groupId);
    if (!g.net) return g.building ?? this.rebuild(groupId, g);
    const now = this.ctx.clock.now().getTime();
    const age = now - g.net.now.getTime();
    // A clock moved backwards (age < 0) makes the snapshot stale too.
    if ((age >= this.refreshMs || age < 0) && !g.building && now >= g.retryAt) void this.rebuild(groupId, g).catch(() => undefined);
    return Promise.resolve(g.net);
  }

  /** Reads the network again; every output asked for lately is built before the new snapshot is served. */
  private rebuild(groupId: string, g: GroupFeeds): Promise<NetworkNow> {
    const now = this.ctx.clock.now();
    const pause = this.pause;
    const building = (async () => {
      const net = await networkNow(this.ctx.db, groupId, now, {
        staleVehicleSeconds: this.ctx.config.feeds.staleVehicleSeconds,
        predictions: this.ctx.config.predictions,
        scheduleHorizonSeconds: this.ctx.config.feeds.etHorizonMinutes * 60,
        memo: scheduleMemoOf(this.ctx.db),
        ...(pause ? { pause: () => pause(groupId) } : {}),
      });
      const built = new Map<string, Output>();
      // A copy: requests move the names they ask for to the end of the map meanwhile, and
      // iterating the live map would visit them again, a rebuild that never ends under load.
      for (const [name, o] of [...g.outputs]) {
        // Requests served from the last snapshot go first between two builds (they are CPU work).
        await nextTurn();
        try {
          built.set(name, await make(net, o.recipe, o.out));
        } catch (err) {
          // Built again on request, where its error reaches the client.
          this.ctx.log.warn({ err, groupId, output: name }, 'feed output build failed');
        }
      }
      g.net = net;
      for (const [name, out] of built) {
        const o = g.outputs.get(name);
        if (o) o.out = out;
      }
      return net;
    })();
    g.building = building;
    const settled = building
      .then(
        () => (g.retryAt = 0),
        (err: unknown) => {
          g.retryAt = now.getTime() + this.refreshMs;
          this.ctx.log.warn({ err, groupId }, 'feed snapshot rebuild failed; the last snapshot is served');
        },
      )
      .finally(() => {
        if (g.building === building) g.building = undefined;
        this.running.delete(settled);
      });
    this.running.add(settled);
    return building;
  }

  /** An output of the group's current snapshot: built with each rebuild once asked for, else now. */
  async output(groupId: string, name: string, recipe: Recipe): Promise<Output> {
    const g = this.group(groupId);
    const known = g.outputs.get(name);
    // Most recent last; the least recent beyond KEPT_OUTPUTS are no longer rebuilt with each snapshot.
    g.outputs.delete(name);
    g.outputs.set(name, { recipe, out: known?.out });
    if (g.outputs.size > KEPT_OUTPUTS) g.outputs.delete(g.outputs.keys().next().value!);
    const net = await this.snapshot(groupId);
    const entry = g.outputs.get(name);
    if (entry?.out?.net === net) return entry.out;
    const out = await make(net, recipe, entry?.out);
    // Kept unless a newer snapshot's output was stored meanwhile.
    if (entry && (!entry.out || entry.out.net.now.getTime() <= net.now.getTime())) entry.out = out;
    return out;
  }

  /** Whether a rebuild of the group is under way (the benchmark measures the answers given meanwhile). */
  rebuilding(groupId: string): boolean {
    return this.groups.get(groupId)?.building !== undefined;
  }

  /** Waits for the rebuilds under way (the app waits for them before it closes the database). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  close(): Promise<void> {
    return this.idle();
  }
}

/**
 * Builds an output from a snapshot, the recipe given what its previous build kept; its
 * Last-Modified stays that of `previous` when the content is the same.
 */
async function make(net: NetworkNow, recipe: Recipe, previous: Output | undefined): Promise<Output> {
  const b = await recipe(net, previous?.state);
  const fingerprint = createHash('sha256').update(b.contentType).update(b.fingerprint).digest('base64url').slice(0, 27);
  const etag = `W/"${fingerprint}"`;
  return {
    body: b.body,
    contentType: b.contentType,
    etag,
    lastModified: previous?.etag === etag ? previous.lastModified : new Date(Math.floor(net.now.getTime() / 1000) * 1000),
    net,
    gzip: b.gzip ?? (await gzipped(b.body)),
    state: b.state,
  };
}

/**
 * Sends an output, or 304 when the client holds it: If-None-Match (weak comparison) first, else
 * If-Modified-Since (HTTP dates have whole seconds).
 */
export function sendOutput(req: FastifyRequest, reply: FastifyReply, out: Output, maxAgeSeconds: number) {
  reply.header('etag', out.etag);
  reply.header('age', snapshotAge(req, out.net));
  reply.header('last-modified', out.lastModified.toUTCString());
  reply.header('cache-control', `public, max-age=${maxAgeSeconds}`);
  reply.header('vary', 'accept-encoding');
  const inm = req.headers['if-none-match'];
  const ims = req.headers['if-modified-since'];
  const weak = (tag: string) => tag.trim().replace(/^W\//, '');
  let fresh = false;
  if (inm !== undefined) fresh = inm.trim() === '*' || inm.split(',').some((t) => weak(t) === weak(out.etag));
  else if (ims !== undefined) {
    const since = Date.parse(ims);
    fresh = !Number.isNaN(since) && out.lastModified.getTime() <= since;
  }
  if (fresh) return reply.code(304).send();
  return sendEncoded(req, reply.type(out.contentType), out.body, out.gzip);
}

/** Seconds since the snapshot was built (HTTP Age: the answer is that old when it leaves). */
export function snapshotAge(req: FastifyRequest, net: NetworkNow): string {
  return String(Math.max(0, Math.floor((req.server.ctx.clock.now().getTime() - net.now.getTime()) / 1000)));
}
