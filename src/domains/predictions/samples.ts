/**
 * How good the published predictions are (issue #17, section 3), measured as the Cal-ITP GTFS-RT
 * Trip Updates metrics measure it (docs/predictions.md, "Measured"):
 *
 * - The sampler records what TripUpdates publishes: for each trip and stop ahead, at most once
 *   per clock minute, the predicted arrival and its horizon (predicted arrival minus the sampling
 *   time), stops farther ahead than maxHorizonMinutes left out. What it samples is the feeds' last
 *   snapshot when they hold a recent one (what a consumer is served at that time), else what
 *   predictTrips predicts then (the feeds' own computation). One insert per group and date and
 *   SAMPLE_CHUNK_ROWS samples, whatever the number of trips.
 * - predictionStats scores the samples against the actual arrivals of the tracking tables, joined
 *   when it answers (a passage recomputed later is scored as it stands), set-based in SQL.
 *
 * The statements are in queries/samples.ts.
 */
import type { AppContext } from '../../platform/context.js';
import type { Db } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { slices } from '../../platform/slices.js';
import type { Period } from '../../platform/time.js';
import { scheduleMemoOf } from '../gtfs/schedule-memo.js';
import { deleteSamplesBefore, HORIZON_BANDS, insertSamples, type SampleColumns, type ScoreKeyed, selectSampleCandidates, selectScores } from './queries/samples.js';
import { predictOpenTrips, type PredictionContext, type TripPrediction } from './service.js';

export { HORIZON_BANDS, WINDOW_MINUTES } from './queries/samples.js';
/** A one-minute bin is complete with this many samples (at most one a minute is recorded: see docs/predictions.md). */
export const COMPLETE_BIN_SAMPLES = 1;


/** Samples recorded by one statement: a city's minute (tens of thousands of stops ahead) is several, each a bounded piece of work. */
export const SAMPLE_CHUNK_ROWS = 5000;

const noColumns = (): SampleColumns => ({ trip: [], seq: [], stop: [], route: [], arr: [], dep: [], unc: [], basis: [] });

/**
 * Samples what the predictions publish now for every group and date with a trip in progress;
 * returns the rows recorded. The predictions are those of the feeds (predictOpenTrips, which
 * feeds/network.ts calls too: the trips that may be in progress, not every trip of the day);
 * the rows are built in slices and written SAMPLE_CHUNK_ROWS at a time, so a city's minute never
 * holds the event loop or one statement long. A chunk is written whole or not at all; the key
 * (one sample a clock minute) makes a round run again harmless.
 *
 * Where the feeds are built on their worker thread (FEEDS_WORKER, PostgreSQL), the sampling is
 * done there (recordSamples, asked through the feed cache): the worker already keeps the day's
 * schedule and the open trips' tracking for its rebuilds, and a city's minute of predictions is
 * seconds of work the service's thread (device batches, trip objects) no longer does. The worker
 * reads the tracking as the rounds left it, as it does for the feeds.
 */
export async function samplePredictions(ctx: AppContext, o: { now?: Date; groupId?: string; chunkRows?: number } = {}): Promise<number> {
  const ask: SampleAsk = {
    now: (o.now ?? ctx.clock.now()).getTime(), groupId: o.groupId ?? null,
    maxHorizonS: ctx.config.predictionSamples.maxHorizonMinutes * 60, chunkRows: o.chunkRows ?? SAMPLE_CHUNK_ROWS,
  };
  const feeds = ctx.services.feeds;
  if (feeds?.offThread) return feeds.samplePredictions(ask);
  return recordSamples(ctx, ask, { served: (groupId) => feeds?.served(groupId) });
}

/**
 * What the feeds serve of a group (feeds/network.ts NetworkNow): when their snapshot was read, the
 * service dates it covers, its trips with the prediction each publishes.
 */
export interface Served {
  now: Date;
  dates: readonly string[];
  trips: readonly { service_date: string; trip: { trip_id: string; route_id: string }; prediction: TripPrediction | null }[];
}

/**
 * A snapshot of the feeds read at most this long before a round (ms) is what a consumer is served
 * then, and is sampled as such; an older one (no consumer reads the feeds), or none, and the round
 * predicts anew.
 */
export const SERVED_WITHIN_MS = 60_000;

/**
 * How long a round of the sampler waits in all for the thread's latency-bound work (recordSamples
 * `busy`), in ms: past it, the round's work goes on beside that work. A round then ends within its
 * minute even when the feeds are rebuilt back to back (the next round is not held off).
 */
export const SAMPLES_YIELD_MS = 20_000;

/** A round of the sampler: at `now` (ms), of one group or all, stops at most maxHorizonS ahead, chunkRows a statement. */
export interface SampleAsk {
  now: number;
  groupId: string | null;
  maxHorizonS: number;
  chunkRows: number;
}

/**
 * A round of the sampler on a database handle (samplePredictions; the feeds' worker thread, with
 * `recompute` false: the tracking as the rounds left it). Returns the rows recorded.
 *
 * `served`: the feeds' last snapshot of a group, if they hold one. When it was read within
 * SERVED_WITHIN_MS before `now` and covers the date, its predictions are sampled: those TripUpdates
 * publishes (from a vehicle: `from_trip_id` set; a frequency trip has none), as served at `now`.
 * That is what is scored, and a city's minute is then no second prediction of the whole network
 * (its open tracking read and predictTrips: seconds of a city's live rebuild) beside the feeds'.
 */
export async function recordSamples(
  ctx: PredictionContext, ask: SampleAsk,
  o: {
    recompute?: boolean; served?: (groupId: string) => Served | undefined;
    /**
     * While the thread's latency-bound work is under way (the feeds' worker: a rebuild), a promise
     * of its end, else undefined: the round's work then goes on only in between (each slice of it
     * and each statement waits for it), so a city's minute of samples never delays a feed.
     */
    busy?: () => Promise<void> | undefined;
    /** How long the round waits for `busy` in all (ms; SAMPLES_YIELD_MS). */
    yieldMs?: number;
  } = {},
): Promise<number> {
  const now = new Date(ask.now);
  const candidates = await selectSampleCandidates(ctx.db, now, ask.groupId);
  let recorded = 0;
  // Whatever else the thread has under way first: each slice of the round waits for it.
  const turn = slices();
  let yieldLeft = o.yieldMs ?? SAMPLES_YIELD_MS;
  const yielded = async () => {
    for (let wait = o.busy?.(); wait && yieldLeft > 0; wait = o.busy?.()) {
      const t0 = performance.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([wait, new Promise<void>((r) => (timer = setTimeout(r, yieldLeft)))]);
      clearTimeout(timer);
      yieldLeft -= performance.now() - t0;
    }
  };
  const insert = async (groupId: string, date: string, cols: SampleColumns) => {
    await yielded();
    return insertSamples(ctx.db, groupId, date, now, cols);
  };
  for (const { group_id: groupId, service_date: date } of candidates) {
    // What is served is taken at once (before any wait: a snapshot read later would not be the one served at `now`).
    const published = await publishedOn(ctx, groupId, date, now, o);
    let cols = noColumns();
    for (const { route, prediction: p } of published) {
      const wait = turn();
      if (wait) {
        await wait;
        await yielded();
      }
      for (const s of p.stops) {
        const arrival = s.arrival_at.getTime() - now.getTime();
        if (Math.round(arrival / 1000) > ask.maxHorizonS) continue;
        cols.trip.push(p.trip_id);
        cols.seq.push(s.stop_sequence);
        cols.stop.push(s.stop_id);
        cols.route.push(route);
        cols.arr.push(arrival);
        cols.dep.push(s.departure_at.getTime() - now.getTime());
        cols.unc.push(s.uncertainty_seconds);
        cols.basis.push(s.basis);
      }
      if (cols.trip.length >= ask.chunkRows) {
        recorded += await insert(groupId, date, cols);
        cols = noColumns();
      }
    }
    if (cols.trip.length > 0) recorded += await insert(groupId, date, cols);
  }
  return recorded;
}

/** The predictions TripUpdates publishes for a group and date at `now`, each with its trip's route: the feeds' snapshot's, else predicted anew. */
async function publishedOn(
  ctx: PredictionContext, groupId: string, date: string, now: Date, o: { recompute?: boolean; served?: (groupId: string) => Served | undefined },
): Promise<{ route: string; prediction: TripPrediction }[]> {
  const served = o.served?.(groupId);
  const age = served ? now.getTime() - served.now.getTime() : Infinity;
  if (served && age >= 0 && age <= SERVED_WITHIN_MS && served.dates.includes(date)) {
    return served.trips.flatMap((t) => (t.service_date === date && t.prediction?.from_trip_id ? [{ route: t.trip.route_id, prediction: t.prediction }] : []));
  }
  // The day's whole schedule, as the feeds read it (gtfs/schedule-memo.ts: read once per version and date).
  const memo = scheduleMemoOf(ctx.db);
  const { schedule: day, predictions } = await predictOpenTrips({ ...ctx, clock: { now: () => now } }, groupId, date, {
    now, schedule: () => memo.dayOf(ctx.db, groupId, undefined, date),
    ...(o.recompute === false ? { recompute: false } : {}),
  });
  if (day === null) return [];
  const routes = new Map(day.trips.map((t) => [t.trip_id, t.route_id]));
  return predictions.flatMap((p) => {
    const route = routes.get(p.trip_id);
    return route === undefined ? [] : [{ route, prediction: p }];
  });
}

/** Deletes the samples of service dates more than retentionDays before now; returns how many. */
export async function pruneSamples(db: Db, now: Date, retentionDays: number): Promise<number> {
  return deleteSamplesBefore(db, now, retentionDays);
}

/** The sampler: a round each minute (and retention once an hour) while the application runs. */
export function startSampleJob(ctx: AppContext, o: { everyMs?: number } = {}): () => Promise<void> {
  let stopped = false;
  let busy = false;
  let lastPrune = 0;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    if (busy || stopped) return;
    busy = true;
    running = (async () => {
      const now = ctx.clock.now();
      await samplePredictions(ctx, { now });
      if (now.getTime() - lastPrune >= 3_600_000) {
        lastPrune = now.getTime();
        await pruneSamples(ctx.db, now, ctx.config.predictionSamples.retentionDays);
      }
    })()
      .catch((err: unknown) => ctx.log.warn({ err }, 'prediction sampler failed; it retries at its next round'))
      .finally(() => (busy = false));
  };
  const timer = setInterval(tick, o.everyMs ?? 60_000);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

export interface ScoreFigures {
  predictions: number;
  accurate: number;
  accuracy_percent: number | null;
  early_percent: number | null;
  on_time_percent: number | null;
  late_percent: number | null;
  median_error_seconds: number | null;
  p25_error_seconds: number | null;
  p75_error_seconds: number | null;
  iqr_error_seconds: number | null;
  minute_bins: number;
  complete_minute_bins: number;
  completeness_percent: number | null;
  wobble_pairs: number;
  median_wobble_seconds: number | null;
}

type Key = string;
const keyOf = (r: ScoreKeyed) =>
  `${r.gd === 0 ? `d${r.service_date}` : r.gr === 0 ? `r${r.route_id}` : 't'}|${r.band ?? ''}`;

/** The figures of stats/predictions: in total, by day and by route, each also by horizon band. */
export async function predictionStats(db: Db, scope: Pick<GroupScope, 'groupId' | 'teams'>, p: Period) {
  const rows = await selectScores(db, scope.groupId, p.start, p.end, scope.teams === null ? null : [...scope.teams]);

  const figures = new Map<Key, ScoreFigures>();
  const blank = (): ScoreFigures => ({
    predictions: 0, accurate: 0, accuracy_percent: null, early_percent: null, on_time_percent: null, late_percent: null,
    median_error_seconds: null, p25_error_seconds: null, p75_error_seconds: null, iqr_error_seconds: null,
    minute_bins: 0, complete_minute_bins: 0, completeness_percent: null, wobble_pairs: 0, median_wobble_seconds: null,
  });
  const get = (r: ScoreKeyed) => {
    const k = keyOf(r);
    return figures.get(k) ?? figures.set(k, blank()).get(k)!;
  };
  const pct = (a: number, n: number) => (n === 0 ? null : Math.round((a / n) * 1000) / 10);
  const s1 = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);
  for (const r of rows) {
    const f = get(r);
    if (r.kind === 'e') {
      f.predictions = r.n;
      f.accurate = r.accurate;
      f.accuracy_percent = pct(r.accurate, r.n);
      f.early_percent = pct(r.early, r.n);
      f.on_time_percent = pct(r.n - r.early - r.late, r.n);
      f.late_percent = pct(r.late, r.n);
      f.median_error_seconds = s1(r.p50);
      f.p25_error_seconds = s1(r.p25);
      f.p75_error_seconds = s1(r.p75);
      f.iqr_error_seconds = r.p25 === null || r.p75 === null ? null : s1(r.p75 - r.p25);
    } else if (r.kind === 'w') {
      f.wobble_pairs = r.n;
      f.median_wobble_seconds = s1(r.p50);
    } else if (r.kind === 'b') f.minute_bins = r.n;
    else f.complete_minute_bins = r.n;
  }
  for (const f of figures.values()) f.completeness_percent = pct(f.complete_minute_bins, f.minute_bins);
  const withBands = (prefix: string) => ({
    ...(figures.get(`${prefix}|`) ?? blank()),
    by_horizon: HORIZON_BANDS.map(([lo, hi]) => ({ from_minutes: lo, to_minutes: hi, ...(figures.get(`${prefix}|${lo}`) ?? blank()) })),
  });
  const keyed: ScoreKeyed[] = rows.filter((r) => r.kind === 'b');
  const days = [...new Set(keyed.filter((r) => r.gd === 0).map((r) => r.service_date!))].sort();
  const routes = [...new Set(keyed.filter((r) => r.gd === 1 && r.gr === 0).map((r) => r.route_id!))].sort();
  return {
    start_date: p.start,
    end_date: p.end,
    total: withBands('t'),
    by_day: days.map((d) => ({ service_date: d, ...withBands(`d${d}`) })),
    by_route: routes.map((r) => ({ route_id: r, ...withBands(`r${r}`) })),
  };
}
