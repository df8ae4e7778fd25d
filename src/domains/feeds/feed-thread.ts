/**
 * The feeds' worker thread (issue #16): on PostgreSQL, the snapshots and their outputs are read
 * and built on a thread of their own (worker.ts), with a connection pool of its own, so that the
 * service's thread answers requests and ingests reports while a city's network is read and its
 * 150 MB timetable is written, and its garbage is collected on another heap. The service's thread
 * keeps the cache (cache.ts: when to rebuild, what to serve); this thread of the worker holds the
 * snapshots, and the pieces each output keeps between two builds.
 *
 * The embedded database (PGlite) lives in the service thread's memory: there, the feeds are built
 * on the service's thread (FEEDS_WORKER auto, the default, chooses so).
 *
 * Messages (structured clone; the outputs' buffers are moved, not copied):
 * - rebuild { groupId, now, outputs: [name, spec][], kept }: reads the group's network at `now`,
 *   builds each output, keeps the snapshot; answers the snapshot's head and the outputs built (an
 *   output that failed is named with its error, the others are served). What the builds of the
 *   outputs named in `kept` left stays (those still asked for that this rebuild does not build:
 *   the timetable, built next or on its own cadence); the others' is let go.
 * - output { groupId, now, name, spec }: one output of the snapshot it holds (read at `now` if it
 *   holds none: a worker started again).
 * - positions { groupId, now, outputs }: the vehicles' positions alone read at `now` (positionsNow),
 *   and the outputs told from them built (its snapshot is not kept: the next output asked for is
 *   of the whole snapshot held).
 * - stop-monitoring { groupId, now, ask }: a StopMonitoring document of that snapshot.
 * - samples { ask }: a round of the prediction sampler (predictions/samples.ts recordSamples) on
 *   its database, with the schedule and tracking it keeps for the feeds; answers the rows recorded.
 * - close: closes its database and ends.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../platform/db/index.js';
import { onItsOwnThread, ThreadClient } from '../../platform/thread.js';
import type { OutputSpec, StopMonitoringAsk } from './outputs.js';
import type { NetworkHead } from './network.js';
import type { SampleAsk } from '../predictions/samples.js';

/** An output as built, before the cache stamps it (ETag, Last-Modified): cache.ts `finish`. */
export interface Finished {
  /** The content; undefined when its gzip form is all that is kept (a city's timetable: Built.body). */
  body: Buffer | undefined;
  gzip: Buffer | undefined;
  /** The content's length in bytes. */
  size: number;
  contentType: string;
  /** Hash of the content without its production timestamps. */
  fingerprint: string;
  /**
   * An output told trip by trip (trip-updates, the SIRI timetable): its trips' pieces made anew and
   * reused from its last build; of one assembled from deflated pieces, those deflated anew.
   */
  pieces?: { made: number; reused: number; deflated?: number };
}

/** What the worker is started with. */
export interface WorkerSetup {
  connectionString: string;
  schema: string | undefined;
  poolSize: number;
  feeds: Config['feeds'];
  predictions: Pick<Config['predictions'], 'minSamples' | 'minLayoverSeconds' | 'clockStepSeconds'>;
}

/** How long a rebuild's parts took on the thread that did them (ms): reading the snapshot, building the outputs served with it. */
export interface RebuildTook {
  snapshotMs: number;
  outputsMs: number;
}

export type Ask =
  /** `kept`: the other outputs still asked for (built next, one by one with op output, or later on their own cadence): what their builds kept stays. */
  | { op: 'rebuild'; groupId: string; now: number; outputs: [string, OutputSpec][]; kept: string[] }
  | { op: 'output'; groupId: string; now: number; name: string; spec: OutputSpec }
  | { op: 'positions'; groupId: string; now: number; outputs: [string, OutputSpec][] }
  | { op: 'stop-monitoring'; groupId: string; now: number; ask: StopMonitoringAsk }
  | { op: 'samples'; ask: SampleAsk }
  | { op: 'close' };

export type Answer =
  /** `head`: of the snapshot asked about (every op but samples, which answers `recorded`). */
  | { ok: true; head?: { now: number; timezone: string }; outputs?: [string, Finished][]; failed?: [string, string][]; document?: string; recorded?: number; took?: RebuildTook }
  | { ok: false; message: string };

/** How long close waits for the worker to end before it stops it: well within the 30 s a shutdown is given (main.ts). */
const CLOSE_WITHIN_MS = 10_000;

/** The pool of the worker's own connections: a rebuild runs a handful of queries, one after the other. */
const WORKER_POOL_SIZE = 4;

/** Whether the feeds are built on their own thread (FEEDS_WORKER; auto: on PostgreSQL). */
export function feedsOffThread(config: Pick<Config, 'feeds'>, db: Db): boolean {
  return onItsOwnThread(config.feeds.worker, db);
}

/** The service thread's side of the feeds' worker (platform/thread.ts): started on first use, started again after it failed. */
export class FeedThread extends ThreadClient<Exclude<Ask, { op: 'close' }>, Answer & { ok: true }> {
  /**
   * `closeWithinMs`: how long close waits for the worker to close its database and end (its asks
   * under way first) before it stops the thread.
   */
  static of(config: Config, db: Db, onError: (err: unknown) => void, closeWithinMs = CLOSE_WITHIN_MS): FeedThread {
    if (!db.reopen) throw new Error('FEEDS_WORKER=on needs PostgreSQL (DATABASE_URL): the embedded database lives in the service thread');
    const setup: WorkerSetup = {
      ...db.reopen, poolSize: Math.min(WORKER_POOL_SIZE, config.databasePoolSize), feeds: config.feeds,
      predictions: { minSamples: config.predictions.minSamples, minLayoverSeconds: config.predictions.minLayoverSeconds, clockStepSeconds: config.predictions.clockStepSeconds },
    };
    return new FeedThread({ title: "the feeds' worker thread", besideUrl: import.meta.url, module: 'worker', setup, onError, closeWithinMs });
  }
}

/** The heads the service's thread keeps of the worker's snapshots. */
export const headOf = (groupId: string, h: { now: number; timezone: string }): NetworkHead => ({ groupId, timezone: h.timezone, now: new Date(h.now) });
