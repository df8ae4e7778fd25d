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
 *   (set-based, see networkNow), builds every output asked for lately (within OUTPUT_IDLE_MS: one
 *   no longer asked for is let go, and built on request if asked again), then replaces the snapshot.
 *   A failed rebuild is logged and tried again one interval later; the last snapshot stays.
 * - Kept fresh (FEEDS_KEEP_FRESH, on by default): while any of a group's outputs was asked for
 *   within OUTPUT_IDLE_MS, each rebuild's end sets a timer for the moment its snapshot turns
 *   stale, which starts the next rebuild unless a request did: an answer is then about an
 *   interval plus a rebuild old whatever the consumers' polling period. Off, a rebuild starts
 *   only from a request, and one consumer polling every 30 s is answered with the snapshot its
 *   previous request started, 30 s old.
 * - The first request for a group (none built yet in this instance) waits for the first build.
 * - A late rebuild (under way for a refresh interval or more: a city's network on a busy machine)
 *   does not hold the vehicles' positions back: the outputs told from them alone (VehiclePositions,
 *   VehicleMonitoring: outputs.ts positionsOnly) are then refreshed on their own from the
 *   vehicles read at once (positionsNow, one statement), each interval, until the rebuild ends. An
 *   output is never replaced by one of an older snapshot.
 * - The SIRI EstimatedTimetable (outputs.ts builtLast) is built after the snapshot is served with
 *   the others, the one before served until then; with FEEDS_ET_REFRESH_SECONDS, only by the
 *   rebuilds that find the one served that old (turns), the one before served meanwhile.
 * - On PostgreSQL (FEEDS_WORKER auto or on), snapshots are read and outputs built on the feeds'
 *   worker thread (feed-thread.ts): this cache decides when, and keeps what it serves (the
 *   outputs and their snapshot's head); the worker holds the snapshots and the pieces kept
 *   between builds. Outputs are then named by what they are (outputs.ts: OutputSpec).
 *
 * An output of 1 KiB or more is also gzipped once, when it is built (off the event loop), and given
 * so to clients that accept it. The SIRI EstimatedTimetable is kept in its gzip form only (a city's
 * is 150 MB of XML, a tenth of that gzipped): a client that does not take gzip is sent it
 * inflated as it goes.
 *
 * Outputs carry a weak ETag (a hash of their content without the production timestamps) and a
 * Last-Modified (when that content last changed), so a client polling an unchanged feed gets
 * 304 Not Modified.
 */
import { createHash } from 'node:crypto';
import { createGunzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { AppContext } from '../../platform/context.js';
import type { Db } from '../../platform/db/index.js';
import type { Service } from '../../platform/lifecycle.js';
import { acceptsGzip, gzipped, sendEncoded } from '../../platform/http/read-cache.js';
import { nextTurn } from '../../platform/slices.js';
import { scheduleMemoOf, type ScheduleMemo } from '../gtfs/schedule-memo.js';
import { FeedThread, feedsOffThread, headOf, type Finished, type RebuildTook } from './feed-thread.js';
import { TripPieces } from './fragments.js';
import { networkNow, positionsNow, type NetworkHead, type NetworkNow } from './network.js';
import { builtLast, outputName, positionsOnly, recipeOf, stopMonitoringDocument, type OutputSpec, type StopMonitoringAsk } from './outputs.js';
import type { SampleAsk, Served } from '../predictions/samples.js';

export interface Output extends Finished {
  /** Weak ETag of the content (timestamps of production excluded). */
  etag: string;
  /** When the content last changed. */
  lastModified: Date;
  /** The snapshot it was built from. */
  net: NetworkHead;
  /** What the recipe kept for its next build (Built.state; on the feeds' worker thread, kept there). */
  state: unknown;
  /** Built from the positions alone, newer than the snapshot `over` (a rebuild late): served in that snapshot's place. */
  over?: NetworkHead;
}

export interface Built {
  /**
   * The content; undefined when `gzip` is its only form (a city's SIRI timetable: 150 MB of XML
   * never joined, fragments.ts assemble), `size` then giving its length. A client that does not
   * take gzip is sent it inflated as it goes (sendOutput).
   */
  body: Buffer | undefined;
  size?: number;
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

/** What a snapshot is read with (the configuration's feeds and predictions). */
export interface SnapshotSettings {
  feeds: Pick<Config['feeds'], 'staleVehicleSeconds' | 'etHorizonMinutes'>;
  predictions: Pick<Config['predictions'], 'minSamples' | 'minLayoverSeconds' | 'clockStepSeconds'>;
}

/**
 * A group's network for the feeds at `now` (networkNow with the configuration's settings).
 * `recompute` false (the feeds' worker thread): the tracking as the service's rounds left it.
 */
export function readSnapshot(
  db: Db, groupId: string, now: Date, s: SnapshotSettings, memo: ScheduleMemo, o: { pause?: () => Promise<void>; recompute?: boolean; previous?: NetworkNow | undefined } = {},
): Promise<NetworkNow> {
  return networkNow(db, groupId, now, {
    staleVehicleSeconds: s.feeds.staleVehicleSeconds,
    predictions: s.predictions,
    scheduleHorizonSeconds: s.feeds.etHorizonMinutes * 60,
    memo,
    ...(o.pause ? { pause: o.pause } : {}),
    ...(o.recompute === false ? { recompute: false } : {}),
    ...(o.previous ? { previous: o.previous } : {}),
  });
}

/** An output's content as served: its gzip form (of 1 KiB or more; off the event loop) and the hash of its fingerprint. */
export async function finish(b: Built): Promise<Finished> {
  const fingerprint = createHash('sha256').update(b.contentType).update(b.fingerprint).digest('base64url').slice(0, 27);
  const pieces = b.state instanceof TripPieces ? { pieces: { made: b.state.made, reused: b.state.reused, ...(b.state.deflated === undefined ? {} : { deflated: b.state.deflated }) } } : {};
  if (b.body === undefined) {
    if (!b.gzip || b.size === undefined) throw new Error('an output without its bytes needs its gzip form and size');
    return { body: undefined, size: b.size, contentType: b.contentType, fingerprint, gzip: b.gzip, ...pieces };
  }
  return { body: b.body, size: b.body.length, contentType: b.contentType, fingerprint, gzip: b.gzip ?? (await gzipped(b.body)), ...pieces };
}

/** Outputs per group rebuilt with each snapshot: the most recently asked for (others are built on request). */
const KEPT_OUTPUTS = 64;

/**
 * An output not asked for in this long is no longer rebuilt with each snapshot, and what it kept
 * is let go: asked for again, it is built on request (the request waits for that build, as the
 * first one did). Without it, one request for a city's SIRI timetable (a third of a rebuild's
 * CPU) had it rebuilt with every snapshot until the service stopped. Longer than any polling
 * interval in use (GTFS-Realtime consumers poll every 10 to 60 s, SIRI ones up to a few minutes).
 */
export const OUTPUT_IDLE_MS = 10 * 60_000;

/**
 * What a rebuild's parts took, in seconds of wall time (the service's /metrics:
 * transit_ops_feed_rebuild_seconds, by part). `served` is the age of the new snapshot when it is
 * served (reading it, building the outputs asked for, and the worker thread's answer); `last` the
 * outputs built after it (outputs.ts builtLast: the SIRI timetable), then served one by one;
 * `idle` the time since the group's previous rebuild ended (none before the first). No group is
 * named: /metrics answers without credentials, and a group's id is not for everyone to see.
 */
export interface RebuildTimes {
  snapshot: number;
  outputs: number;
  served: number;
  last: number;
  total: number;
  idle: number | undefined;
}

interface GroupFeeds {
  /** The last built snapshot: the snapshot itself on this thread, its head when the worker thread holds it. */
  net: NetworkHead | undefined;
  /** Built on this thread: the snapshot (net is it). */
  full: NetworkNow | undefined;
  /** The rebuild under way, if any (at most one per group), and when it started (ms, service clock). */
  building: Promise<NetworkHead> | undefined;
  buildingSince: number;
  /** The refresh of the positions-only outputs under way, while a rebuild is late. */
  positions: Promise<void> | undefined;
  /** No background rebuild before this time (ms, service clock): set after a failed one. */
  retryAt: number;
  /** When the last rebuild ended (performance.now(), ms), if one did. */
  endedAt: number | undefined;
  /** The outputs asked for, most recent last, with the last one built (`spec`: one the worker thread can build). */
  outputs: Map<string, AskedOutput>;
  /** The timer of the next rebuild kept fresh (FEEDS_KEEP_FRESH), if one is set. */
  fresh: ReturnType<typeof setTimeout> | undefined;
}

/** Whether the output was not asked for within OUTPUT_IDLE_MS of `now` (ms, service clock; one asked for after it, the clock moved back, is not). */
const idle = (o: AskedOutput, now: number) => now - o.askedAt > OUTPUT_IDLE_MS;

interface AskedOutput {
  spec: OutputSpec | undefined;
  recipe: Recipe;
  out: Output | undefined;
  /** When it was last asked for (ms, service clock). */
  askedAt: number;
}

/** The feed snapshots of an app (a service of buildApp; tests reach its `pause` seam as ctx.services.feeds). */
export class FeedCache implements Service {
  private readonly groups = new Map<string, GroupFeeds>();
  private readonly running = new Set<Promise<unknown>>();
  /** The feeds' worker thread (FEEDS_WORKER; feed-thread.ts), or undefined: built on this thread. */
  private readonly thread: FeedThread | undefined;
  /**
   * Test seam: awaited in the middle of every rebuild (after the trips are read, before the
   * vehicles are), so a test can hold a rebuild while it reads the feeds and reports positions.
   * Built on this thread only.
   */
  pause: ((groupId: string) => Promise<void>) | undefined;
  /** Test seam: awaited before each output a rebuild builds last (builtLast), once its snapshot is served with the others; on either thread. */
  pauseLast: ((groupId: string, name: string) => Promise<void>) | undefined;
  /** Told what each rebuild that succeeded took (the service's /metrics). */
  private readonly rebuilt: ((t: RebuildTimes) => void)[] = [];
  /** Set by close: no rebuild kept fresh is set any more. */
  private closing = false;

  constructor(private readonly ctx: AppContext) {
    this.thread = feedsOffThread(ctx.config, ctx.db) ? FeedThread.of(ctx.config, ctx.db, (err) => ctx.log.error({ err }, "the feeds' worker thread failed; it is started again at the next rebuild")) : undefined;
  }

  /** Calls `listener` with what each successful rebuild took, once it ended. */
  onRebuilt(listener: (t: RebuildTimes) => void): void {
    this.rebuilt.push(listener);
  }

  /** Whether the snapshots are read and built on the feeds' worker thread. */
  get offThread(): boolean {
    return this.thread !== undefined;
  }

  /** A round of the prediction sampler on the feeds' worker thread (predictions/samples.ts): the rows recorded. */
  async samplePredictions(ask: SampleAsk): Promise<number> {
    if (!this.thread) throw new Error("the prediction sampler is asked of the feeds' worker thread, and the feeds are built on this thread");
    return (await this.thread.ask({ op: 'samples', ask })).recorded ?? 0;
  }

  /** The group's last snapshot built on this thread, if any (the prediction sampler samples what it publishes; on the worker thread, the worker's). */
  served(groupId: string): Served | undefined {
    return this.groups.get(groupId)?.full;
  }

  private get refreshMs() {
    return this.ctx.config.feeds.refreshSeconds * 1000;
  }

  private group(groupId: string): GroupFeeds {
    let g = this.groups.get(groupId);
    if (!g) this.groups.set(groupId, (g = { net: undefined, full: undefined, building: undefined, buildingSince: 0, positions: undefined, retryAt: 0, endedAt: undefined, outputs: new Map(), fresh: undefined }));
    return g;
  }

  /**
   * The group's last built snapshot (its head), at once; when it is stale, a rebuild starts in the
   * background. Before the first build, the first build (started, or joined).
   */
  snapshot(groupId: string): Promise<NetworkHead> {
    const g = this.group(groupId);
    if (!g.net) return g.building ?? this.rebuild(groupId, g);
    if (!g.building && this.due(g, this.ctx.clock.now().getTime())) void this.rebuild(groupId, g).catch(() => undefined);
    return Promise.resolve(g.net);
  }

  /**
   * Whether the group's snapshot is to be rebuilt at `now` (ms, service clock): there is one, as
   * old as the refresh interval or from a later clock (one moved back), and no failed rebuild is
   * being waited out.
   */
  private due(g: GroupFeeds, now: number): boolean {
    if (!g.net) return false;
    const age = now - g.net.now.getTime();
    return (age >= this.refreshMs || age < 0) && now >= g.retryAt;
  }

  /** Reads the network again; every output asked for lately is built before the new snapshot is served. */
  private rebuild(groupId: string, g: GroupFeeds): Promise<NetworkHead> {
    const now = this.ctx.clock.now();
    FeedCache.forgetIdle(g, now.getTime());
    const t = new RebuildClock(g.endedAt);
    const building = this.thread ? this.rebuildOffThread(this.thread, groupId, g, now, t) : this.rebuildHere(groupId, g, now, t);
    g.building = building;
    g.buildingSince = now.getTime();
    const settled = building
      .then(
        () => {
          g.retryAt = 0;
          g.endedAt = performance.now();
          const times = t.ended(g.endedAt);
          for (const listener of this.rebuilt) listener(times);
        },
        (err: unknown) => {
          g.retryAt = now.getTime() + this.refreshMs;
          this.ctx.log.warn({ err, groupId }, 'feed snapshot rebuild failed; the last snapshot is served');
        },
      )
      .finally(() => {
        if (g.building === building) g.building = undefined;
        this.running.delete(settled);
        this.keepFresh(groupId, g);
      });
    this.running.add(settled);
    return building;
  }

  /**
   * FEEDS_KEEP_FRESH: the next rebuild of the group, when its snapshot turns stale (or a failed
   * rebuild's retry is due), without waiting for a request; none once no output was asked for
   * within OUTPUT_IDLE_MS, or the cache is closing. A rebuild under way when it fires sets the
   * next one when it ends.
   */
  private keepFresh(groupId: string, g: GroupFeeds) {
    clearTimeout(g.fresh);
    g.fresh = undefined;
    if (!this.ctx.config.feeds.keepFresh || this.closing || g.building || !g.net) return;
    const now = this.ctx.clock.now().getTime();
    if (![...g.outputs.values()].some((o) => !idle(o, now))) return;
    if (this.due(g, now)) {
      void this.rebuild(groupId, g).catch(() => undefined);
      return;
    }
    // Checked again then: a clock held (a test's) is waited for, an interval at a time.
    const age = now - g.net.now.getTime();
    g.fresh = setTimeout(() => this.keepFresh(groupId, g), Math.max(age < this.refreshMs ? this.refreshMs - age : 0, g.retryAt - now));
    g.fresh.unref();
  }

  /** Whether a rebuild kept fresh (FEEDS_KEEP_FRESH) is set for the group. */
  keptFresh(groupId: string): boolean {
    return this.groups.get(groupId)?.fresh !== undefined;
  }

  /**
   * The outputs not asked for within OUTPUT_IDLE_MS of `now` (ms, service clock) are let go. (One
   * asked for after `now`, the clock moved back, is kept.)
   */
  private static forgetIdle(g: GroupFeeds, now: number) {
    for (const [name, o] of g.outputs) if (idle(o, now)) g.outputs.delete(name);
  }

  /**
   * The outputs asked for lately, in the order a rebuild builds them: those built last
   * (outputs.ts builtLast) apart, after the snapshot is served with the others.
   */
  private turns(g: GroupFeeds, now: Date): { first: [string, AskedOutput][]; last: string[] } {
    // A copy: requests move the names they ask for to the end of the map meanwhile, and
    // iterating the live map would visit them again, a rebuild that never ends under load.
    const all = [...g.outputs];
    // Those built last are built with this snapshot once the one served is FEEDS_ET_REFRESH_SECONDS old (or from a later clock).
    const due = (o: AskedOutput) => {
      const age = o.out ? now.getTime() - o.out.net.now.getTime() : Infinity;
      return age >= this.ctx.config.feeds.etRefreshSeconds * 1000 || age < 0;
    };
    return { first: all.filter(([, o]) => !o.spec || !builtLast(o.spec)), last: all.flatMap(([name, o]) => (o.spec && builtLast(o.spec) && due(o) ? [name] : [])) };
  }

  private async rebuildHere(groupId: string, g: GroupFeeds, now: Date, t: RebuildClock): Promise<NetworkHead> {
    const pause = this.pause;
    const net = await readSnapshot(this.ctx.db, groupId, now, this.ctx.config, scheduleMemoOf(this.ctx.db), { previous: g.full, ...(pause ? { pause: () => pause(groupId) } : {}) });
    const read = performance.now();
    const { first, last } = this.turns(g, now);
    const built = new Map<string, Output>();
    for (const [name, o] of first) {
      // Requests served from the last snapshot go first between two builds (they are CPU work).
      await nextTurn();
      try {
        built.set(name, await make(net, o.recipe, o.out));
      } catch (err) {
        // Built again on request, where its error reaches the client.
        this.ctx.log.warn({ err, groupId, output: name }, 'feed output build failed');
      }
    }
    g.net = g.full = net;
    this.keep(g, built);
    t.served({ snapshotMs: read - t.start, outputsMs: performance.now() - read });
    await this.buildLast(groupId, g, last, async (name) => {
      const o = g.outputs.get(name);
      return o && make(net, o.recipe, o.out);
    });
    return net;
  }

  private async rebuildOffThread(thread: FeedThread, groupId: string, g: GroupFeeds, now: Date, t: RebuildClock): Promise<NetworkHead> {
    const { first, last } = this.turns(g, now);
    const asked = first.flatMap(([name, o]) => (o.spec ? [[name, o.spec] as [string, OutputSpec]] : []));
    // Every other output still asked for keeps what its last build kept: the timetable, built
    // next (`last`) or not by this rebuild (FEEDS_ET_REFRESH_SECONDS: its next build reuses its
    // trips' pieces, not all made anew).
    const kept = [...g.outputs].flatMap(([name, o]) => (o.spec && !asked.some(([n]) => n === name) ? [name] : []));
    const a = await thread.ask({ op: 'rebuild', groupId, now: now.getTime(), outputs: asked, kept });
    const net = headOf(groupId, a.head!);
    const built = stampedAll(net, a.outputs, g);
    for (const [name, err] of a.failed ?? []) this.ctx.log.warn({ err, groupId, output: name }, 'feed output build failed');
    g.net = net;
    this.keep(g, built);
    t.served(a.took);
    await this.buildLast(groupId, g, last, async (name) => {
      const spec = g.outputs.get(name)?.spec;
      if (!spec) return undefined;
      // From the snapshot the worker holds: this one (no other rebuild of the group meanwhile), or one it read again (it was started again).
      const b = await thread.ask({ op: 'output', groupId, now: net.now.getTime(), name, spec });
      return stamp(b.head!.now === net.now.getTime() ? net : headOf(groupId, b.head!), received(b.outputs![0]![1]), g.outputs.get(name)?.out);
    });
    return net;
  }

  /**
   * The outputs a rebuild builds last, one by one once its snapshot is served with the others:
   * each is served as soon as it is built; until then, a request for it is answered with the one
   * before (outputOf), never made to wait nor building it twice. A failed build leaves the one
   * before served; the next rebuild builds it again.
   */
  private async buildLast(groupId: string, g: GroupFeeds, names: string[], build: (name: string) => Promise<Output | undefined>) {
    for (const name of names) {
      await nextTurn();
      try {
        await this.pauseLast?.(groupId, name);
        const out = await build(name);
        if (out) this.keep(g, new Map([[name, out]]));
      } catch (err) {
        this.ctx.log.warn({ err, groupId, output: name }, 'feed output build failed');
      }
    }
  }

  /**
   * The outputs just built, kept for those still asked for. One built from the positions alone is
   * served in place of the group's snapshot (`over`). An output newer than the one built (the
   * positions refreshed while the rebuild was late) stays, served in place of the new snapshot.
   */
  private keep(g: GroupFeeds, built: Map<string, Output>, positions = false) {
    const clock = this.ctx.clock.now().getTime();
    for (const [name, out] of built) {
      const o = g.outputs.get(name);
      if (!o) continue;
      const kept = o.out;
      // (Newer, unless the clock was moved back past it.)
      if (kept && kept.net.now.getTime() > out.net.now.getTime() && kept.net.now.getTime() <= clock) {
        if (!positions) kept.over = g.net;
        continue;
      }
      if (positions) out.over = g.net;
      o.out = out;
    }
  }

  /**
   * While the group's rebuild is late (under way for a refresh interval or more), the
   * positions-only outputs whose snapshot is stale are built again from the vehicles read now, in
   * the background (one such refresh at a time per group).
   */
  private refreshPositions(groupId: string, g: GroupFeeds) {
    if (!g.building || g.positions) return;
    const now = this.ctx.clock.now();
    if (now.getTime() - g.buildingSince < this.refreshMs) return;
    FeedCache.forgetIdle(g, now.getTime());
    const stale = [...g.outputs].flatMap(([name, o]) =>
      (o.spec && positionsOnly(o.spec) && (!o.out || now.getTime() - o.out.net.now.getTime() >= this.refreshMs) ? [[name, o.spec] as [string, OutputSpec]] : []));
    if (stale.length === 0) return;
    const refreshed = this.positionsOf(groupId, g, now, stale)
      .then((built) => this.keep(g, built, true))
      .catch((err: unknown) => this.ctx.log.warn({ err, groupId }, 'feed positions refresh failed; the last outputs are served'))
      .finally(() => {
        g.positions = undefined;
        this.running.delete(refreshed);
      });
    g.positions = refreshed;
    this.running.add(refreshed);
  }

  private async positionsOf(groupId: string, g: GroupFeeds, now: Date, outputs: [string, OutputSpec][]): Promise<Map<string, Output>> {
    if (this.thread) {
      const a = await this.thread.ask({ op: 'positions', groupId, now: now.getTime(), outputs });
      return stampedAll(headOf(groupId, a.head!), a.outputs, g);
    }
    const built = new Map<string, Output>();
    const net = await positionsNow(this.ctx.db, groupId, now, this.ctx.config.feeds.staleVehicleSeconds);
    for (const [name, spec] of outputs) built.set(name, await make(net, recipeOf(spec), g.outputs.get(name)?.out));
    return built;
  }

  /** An output of the group's current snapshot: built with each rebuild once asked for, else now. */
  output(groupId: string, spec: OutputSpec): Promise<Output> {
    return this.outputOf(groupId, outputName(spec), recipeOf(spec), spec);
  }

  /**
   * An output named `name` made by `recipe` (tests: any recipe, built on this thread); with its
   * `spec`, one the worker thread builds when the feeds are built there.
   */
  async outputOf(groupId: string, name: string, recipe: Recipe, spec?: OutputSpec): Promise<Output> {
    if (this.thread && !spec) throw new Error(`output ${name}: the feeds' worker thread builds outputs named by a spec`);
    const g = this.group(groupId);
    const known = g.outputs.get(name);
    // Most recent last; the least recent beyond KEPT_OUTPUTS are no longer rebuilt with each snapshot.
    g.outputs.delete(name);
    g.outputs.set(name, { spec, recipe, out: known?.out, askedAt: this.ctx.clock.now().getTime() });
    if (g.outputs.size > KEPT_OUTPUTS) g.outputs.delete(g.outputs.keys().next().value!);
    const net = await this.snapshot(groupId);
    if (spec && positionsOnly(spec)) this.refreshPositions(groupId, g);
    const entry = g.outputs.get(name);
    // Of this snapshot, or built from the positions since (a rebuild late), or, for one built
    // last, the one before: while the rebuild under way builds it, or until it is due again
    // (FEEDS_ET_REFRESH_SECONDS; or its build with the snapshot failed).
    if (entry?.out && (entry.out.net === net || entry.out.over === net || (spec !== undefined && builtLast(spec)))) return entry.out;
    let out: Output;
    if (this.thread) {
      const a = await this.thread.ask({ op: 'output', groupId, now: net.now.getTime(), name, spec: spec! });
      const f = a.outputs![0]![1];
      // The worker's snapshot: the same as this one, or a newer one whose rebuild's answer is on its way.
      const built = a.head!.now === net.now.getTime() ? net : headOf(groupId, a.head!);
      out = stamp(built, received(f), entry?.out);
    } else {
      out = await make(g.full!, recipe, entry?.out);
    }
    // Kept unless a newer snapshot's output was stored meanwhile.
    if (entry && (!entry.out || entry.out.net.now.getTime() <= out.net.now.getTime())) entry.out = out;
    return out;
  }

  /** A SIRI StopMonitoring document of the group's current snapshot, with that snapshot's head (not cached: it depends on the stop). */
  async stopMonitoring(groupId: string, ask: StopMonitoringAsk): Promise<{ net: NetworkHead; document: string }> {
    const net = await this.snapshot(groupId);
    if (!this.thread) {
      // The snapshot itself (a rebuild may have replaced the one just answered: the newer one).
      const full = this.group(groupId).full!;
      return { net: full, document: await stopMonitoringDocument(this.ctx.db, full, ask) };
    }
    const a = await this.thread.ask({ op: 'stop-monitoring', groupId, now: net.now.getTime(), ask });
    return { net: a.head!.now === net.now.getTime() ? net : headOf(groupId, a.head!), document: a.document! };
  }

  /** Whether a rebuild of the group is under way (the benchmark measures the answers given meanwhile). */
  rebuilding(groupId: string): boolean {
    return this.groups.get(groupId)?.building !== undefined;
  }

  /** Waits for the rebuilds under way (the app waits for them before it closes the database). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const g of this.groups.values()) {
      clearTimeout(g.fresh);
      g.fresh = undefined;
    }
    await this.idle();
    await this.thread?.close();
  }
}

/** The instants of one rebuild (performance.now(), ms), told as RebuildTimes once it ended. */
class RebuildClock {
  readonly start = performance.now();
  private servedAt: number | undefined;
  private took: RebuildTook | undefined;

  constructor(private readonly previousEnd: number | undefined) {}

  /** The snapshot is served; `took`: its reading and its outputs, on the thread that did them. */
  served(took: RebuildTook | undefined) {
    this.servedAt = performance.now();
    this.took = took;
  }

  ended(at: number): RebuildTimes {
    const servedAt = this.servedAt ?? at;
    return {
      snapshot: (this.took?.snapshotMs ?? 0) / 1000,
      outputs: (this.took?.outputsMs ?? 0) / 1000,
      served: (servedAt - this.start) / 1000,
      last: (at - servedAt) / 1000,
      total: (at - this.start) / 1000,
      idle: this.previousEnd === undefined ? undefined : (this.start - this.previousEnd) / 1000,
    };
  }
}

/** A buffer as it came from the worker thread (a Uint8Array: structured clone does not keep Buffer). */
const asBuffer = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
const received = (f: Finished): Finished => ({ ...f, body: f.body && asBuffer(f.body), gzip: f.gzip && asBuffer(f.gzip) });

/**
 * Builds an output from a snapshot, the recipe given what its previous build kept; its
 * Last-Modified stays that of `previous` when the content is the same.
 */
async function make(net: NetworkNow, recipe: Recipe, previous: Output | undefined): Promise<Output> {
  const b = await recipe(net, previous?.state);
  return { ...stamp(net, await finish(b), previous), state: b.state };
}

/** The outputs the worker thread built from the snapshot `net`, stamped against those the group keeps. */
function stampedAll(net: NetworkHead, outputs: [string, Finished][] | undefined, g: GroupFeeds): Map<string, Output> {
  const built = new Map<string, Output>();
  for (const [name, f] of outputs ?? []) built.set(name, stamp(net, received(f), g.outputs.get(name)?.out));
  return built;
}

/** An output of a snapshot: its ETag, and its Last-Modified (that of `previous` when the content is the same). */
function stamp(net: NetworkHead, f: Finished, previous: Output | undefined): Output {
  const etag = `W/"${f.fingerprint}"`;
  return {
    ...f,
    etag,
    lastModified: previous?.etag === etag ? previous.lastModified : new Date(Math.floor(net.now.getTime() / 1000) * 1000),
    net,
    state: undefined,
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
  if (out.body === undefined) {
    if (acceptsGzip(req.headers['accept-encoding'])) return reply.type(out.contentType).header('content-encoding', 'gzip').send(out.gzip);
    // Only the gzip form is kept: inflated as it is sent (zlib's threads), never held whole.
    const inflated = createGunzip();
    inflated.end(out.gzip);
    return reply.type(out.contentType).send(inflated);
  }
  return sendEncoded(req, reply.type(out.contentType), out.body, out.gzip);
}

/** Seconds since the snapshot was built (HTTP Age: the answer is that old when it leaves). */
export function snapshotAge(req: FastifyRequest, net: NetworkHead): string {
  return String(Math.max(0, Math.floor((req.server.ctx.clock.now().getTime() - net.now.getTime()) / 1000)));
}
