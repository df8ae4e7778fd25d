/**
 * The learned model of the predictions (migration 0018, docs/predictions.md): segment running
 * times and dwells from the group's own tracking history, built set-based in the database, and
 * the job that keeps it fresh.
 *
 * Like the bulk exports, the builder's statement (queries/model.ts) reads the tracking tables
 * directly (trip_tracking_stops, one pass over the history window): reading it trip by trip
 * through trackingOf would cost a query per trip and date.
 */
import type { AppContext } from '../../platform/context.js';
import type { Db, Queryable } from '../../platform/db/index.js';
import { addDays, localDate } from '../../platform/time.js';
import { getGroup } from '../groups/service.js';
import type { SegmentStats } from './predict.js';
import { deleteSegments, insertLearnedSegments, selectDayTypes, selectModelHead, selectModelSegments, selectStaleGroups, tryBuildLock, upsertModel } from './queries/model.js';

export const DAY_TYPES = ['weekday', 'saturday', 'sunday'] as const;
export type DayType = (typeof DAY_TYPES)[number];

/** The day type of each date (YYYY-MM-DD), in one query. */
export async function dayTypesOf(db: Queryable, groupId: string, dates: readonly string[]): Promise<Map<string, DayType>> {
  const rows = await selectDayTypes(db, groupId, [...new Set(dates)]);
  return new Map(rows.map((r) => [r.d, r.day_type]));
}

export interface ModelOptions {
  historyDays: number;
  bandSeconds: number;
}

export interface BuildResult {
  group_id: string;
  built_at: Date;
  history_from: string;
  history_to: string;
  /** Stop-to-stop runs learned from. */
  runs: number;
  segments: number;
  took_ms: number;
}

/**
 * Rebuilds a group's segments from the tracking history of the `historyDays` service dates
 * before the one of `now` (today's trips are still running): one set-based statement, the
 * group's rows replaced in its transaction, so reads and ingest never wait for it (on
 * PostgreSQL; PGlite runs one statement at a time anyway). Another build of the group in
 * progress (another instance) makes this one return null.
 */
export async function buildModel(db: Db, groupId: string, now: Date, o: ModelOptions): Promise<BuildResult | null> {
  const started = Date.now();
  const g = await getGroup(db, groupId);
  if (!g) return null;
  const today = localDate(now, g.timezone);
  const from = addDays(today, -o.historyDays);
  return db.transaction(async (tx) => {
    const locked = await tryBuildLock(tx, groupId);
    if (!locked) return null;
    await deleteSegments(tx, groupId);
    const counts = await insertLearnedSegments(tx, groupId, from, today, g.timezone, o.bandSeconds, now);
    const result: BuildResult = { group_id: groupId, built_at: now, history_from: from, history_to: addDays(today, -1), runs: counts.runs, segments: counts.segments, took_ms: Date.now() - started };
    await upsertModel(tx, groupId, now, o.bandSeconds, result);
    return result;
  });
}

/** What a group's model says for some route directions, in one day type and range of bands. */
export interface LoadedModel {
  bandSeconds: number;
  segments: SegmentIndex;
}

/**
 * Learned segments by route direction, from stop, to stop and time band: nested maps of the ids
 * as given, not one map keyed by a string made of the four. The feeds predict a city's 14,000
 * trips at every rebuild, some 800,000 segment lookups: a key string made and hashed for each was
 * 110–160 ms a rebuild and as many strings of garbage, against 30–40 ms (a micro-benchmark of
 * 250,000 segments and 560,000 lookups, 2026-12-06).
 */
export class SegmentIndex {
  private readonly byPattern = new Map<string, Map<string, Map<string, (SegmentStats | undefined)[]>>>();
  /** Segments held (one per route direction, stops and band). */
  size = 0;

  get(patternKey: string, fromStopId: string, toStopId: string, band: number): SegmentStats | undefined {
    return this.byPattern.get(patternKey)?.get(fromStopId)?.get(toStopId)?.[band];
  }

  set(patternKey: string, fromStopId: string, toStopId: string, band: number, stats: SegmentStats): void {
    let from = this.byPattern.get(patternKey);
    if (!from) this.byPattern.set(patternKey, (from = new Map()));
    let to = from.get(fromStopId);
    if (!to) from.set(fromStopId, (to = new Map()));
    let bands = to.get(toStopId);
    if (!bands) to.set(toStopId, (bands = []));
    if (bands[band] === undefined) this.size++;
    bands[band] = stats;
  }
}

/**
 * The segments of the given route directions in a day type, in the bands holding the seconds
 * `from` to `to` of the service day; null when the group has no model yet (then every prediction
 * follows the schedule). Through the handle's ModelMemo: one statement for the model's version, and
 * the segments read only for what the memo does not hold.
 */
export function loadModel(db: Db, groupId: string, q: { patternKeys: readonly string[]; dayType: DayType; from: number; to: number }): Promise<LoadedModel | null> {
  return db.kept.of(ModelMemo).load(db, groupId, q);
}

/**
 * Segments a memo holds per group and day type at most: past it, what it held is let go and read
 * anew as asked (about 200 bytes a segment: 200 MB at most). A city's feeds ask for some 800
 * route directions over seven hours of bands (250,000 segments of hour bands where the history
 * covers them all; a whole day's, 800,000).
 */
export const MODEL_MEMO_SEGMENTS = 1_000_000;

/**
 * The segments of a group's model read through a database handle, kept while that build of the
 * model is the one stored (prediction_models.version, migration 0023), per day type: for each route
 * direction, the bands read (one interval), grown as asked. The feeds predict a network at every
 * rebuild, every few seconds: without it each rebuild read the segments of every route direction it
 * predicts again (a city: up to 250,000 rows a rebuild with hour bands, four times that with
 * quarter-hour ones), and each trip object those of its own.
 * A model built again (another version) is read anew; one dropped (no model row) gives null.
 */
export class ModelMemo {
  private readonly groups = new Map<string, { version: string; bandSeconds: number; days: Map<DayType, HeldSegments> }>();

  async load(db: Queryable, groupId: string, q: { patternKeys: readonly string[]; dayType: DayType; from: number; to: number }, retried = false): Promise<LoadedModel | null> {
    const head = await selectModelHead(db, groupId);
    if (!head) {
      this.groups.delete(groupId);
      return null;
    }
    let g = this.groups.get(groupId);
    if (!g || g.version !== head.version || g.bandSeconds !== head.band_seconds) this.groups.set(groupId, (g = { version: head.version, bandSeconds: head.band_seconds, days: new Map() }));
    let held = g.days.get(q.dayType);
    if (!held || held.segments.size > MODEL_MEMO_SEGMENTS) g.days.set(q.dayType, (held = { bands: new Map(), segments: new SegmentIndex() }));
    const lo = Math.floor(q.from / g.bandSeconds);
    const hi = Math.floor(q.to / g.bandSeconds);
    const missing = [...new Set(q.patternKeys)].filter((k) => {
      const b = held.bands.get(k);
      return !b || b.from > lo || b.to < hi;
    });
    if (missing.length > 0) {
      // Each route direction's bands stay one interval: what it held and what is asked, together.
      const from = Math.min(lo, ...missing.map((k) => held.bands.get(k)?.from ?? lo));
      const to = Math.max(hi, ...missing.map((k) => held.bands.get(k)?.to ?? hi));
      const rows = await selectModelSegments(db, groupId, g.version, missing, q.dayType, from, to);
      if (rows.length === 0) {
        // Built again between the two statements: the new build, read anew (once; then as the first).
        this.groups.delete(groupId);
        return retried ? null : this.load(db, groupId, q, true);
      }
      for (const r of rows) {
        if (r.pattern_key === null) continue;
        const { pattern_key, from_stop_id, to_stop_id, time_band, ...stats } = r;
        held.segments.set(pattern_key, from_stop_id, to_stop_id, time_band, stats);
      }
      for (const k of missing) held.bands.set(k, { from, to });
    }
    return { bandSeconds: g.bandSeconds, segments: held.segments };
  }
}

/** The segments a ModelMemo holds of a day type, and the bands read of each route direction. */
interface HeldSegments {
  bands: Map<string, { from: number; to: number }>;
  segments: SegmentIndex;
}

/** The groups whose model is missing or older than `maxAgeHours` and that have tracking history to learn from. */
async function staleGroups(db: Queryable, now: Date, o: { maxAgeHours: number; historyDays: number }): Promise<string[]> {
  return selectStaleGroups(db, now, o.maxAgeHours, o.historyDays + 1);
}

/**
 * The model job: shortly after start, then every `checkMs`, rebuilds the models of the groups
 * whose model is missing or older than PREDICTIONS_MAX_AGE_HOURS, one group at a time. Several
 * instances may run it: the advisory lock of buildModel lets one build a group, the others skip it.
 * The function it returns stops the job and waits for the build in progress.
 */
export function startModelJob(ctx: AppContext, o: { firstMs?: number; checkMs?: number } = {}): () => Promise<void> {
  const cfg = ctx.config.predictions;
  let stopped = false;
  let busy = false;
  let running: Promise<void> = Promise.resolve();
  const round = async () => {
    for (const groupId of await staleGroups(ctx.db, ctx.clock.now(), cfg)) {
      if (stopped) return;
      const r = await buildModel(ctx.db, groupId, ctx.clock.now(), { historyDays: cfg.historyDays, bandSeconds: cfg.bandMinutes * 60 });
      if (r) ctx.log.info({ group_id: groupId, runs: r.runs, segments: r.segments, took_ms: r.took_ms }, 'prediction model built');
    }
  };
  const tick = () => {
    if (busy || stopped) return;
    busy = true;
    running = round()
      .catch((err: unknown) => ctx.log.warn({ err }, 'prediction model job failed; it retries at its next check'))
      .finally(() => (busy = false));
  };
  const first = setTimeout(tick, o.firstMs ?? 30_000);
  const timer = setInterval(tick, o.checkMs ?? 600_000);
  first.unref();
  timer.unref();
  return async () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(timer);
    await running;
  };
}
