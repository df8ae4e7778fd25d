/**
 * The tracking's thread (issue #16): on PostgreSQL, trip tracking is recomputed on a worker thread
 * of its own (tracking-worker.ts), with a connection pool of its own. The service's thread then
 * answers requests and ingests reports while a round reads, computes and writes a city's trips,
 * and the reports each round holds for the next (tracking/round.ts) live on that thread's heap,
 * collected there. Every recomputation of the app's database handle runs there: the refresh after
 * ingest, the worker catching up what was left marked, and the reads that recompute the trips they
 * cover first (refreshDirty asks the thread, and waits: RecomputeElsewhere), so one place
 * recomputes each trip, as on the service's thread before.
 *
 * The embedded database (PGlite) lives in the service thread's memory: there, tracking is
 * recomputed on the service's thread (TRACKING_WORKER auto, the default, chooses so).
 *
 * Messages (platform/thread.ts): soon { groupId, trips } (the refresh after ingest; not answered),
 * sweep (a pass of the worker; not answered), refresh { o } (refreshDirty; answers `recomputed`),
 * close. The thread reports a failed round or pass as a warning (`[-1, { ok: false, message }]`).
 */
import type { Config } from '../../config.js';
import type { AppContext } from '../../platform/context.js';
import type { Db } from '../../platform/db/index.js';
import { onItsOwnThread, ThreadClient } from '../../platform/thread.js';
import { anyMarked, markTrips } from './queries/tracking.js';
import { RecomputeElsewhere, type RefreshFilter, type Tracking, type TripRef } from './tracking.js';

/** What the thread is started with. */
export interface TrackingSetup {
  connectionString: string;
  schema: string | undefined;
  poolSize: number;
  /** The thread's nice value (TRACKING_THREAD_NICE). */
  nice: number;
}

export type TrackingAsk =
  | { op: 'soon'; groupId: string; trips: readonly TripRef[] }
  | { op: 'sweep' }
  | { op: 'refresh'; o: RefreshFilter };

export interface TrackingAnswer {
  ok: true;
  recomputed?: number;
}

/**
 * The thread's connections: a round's statements run one after the other, a read's refresh beside
 * it, and the reads of a round's reports (four statements) together.
 */
const THREAD_POOL_SIZE = 4;
/**
 * The thread's scheduling priority (Linux nice value; the service's other threads keep 0). On a
 * full machine its rounds wait for the device answers and the feeds' rebuilds: the trips stay
 * marked meanwhile, and a read that covers one still has it recomputed first. Measured on the city
 * (bench/RESULTS.md, 2026-12-02 08:00–10:00): against the same thread at 0, the batches' p99
 * 235–254 against 309–359 ms, trip-updates 11.3–16.0 s behind at p50 against 18.3–23.8 s,
 * tracking lag p99 1.4–1.9 s against 1.4–1.7 s.
 */
export const TRACKING_THREAD_NICE = 10;

/** How long close waits for the thread to finish its round and close its database before it stops it. */
const CLOSE_WITHIN_MS = 10_000;

/** Whether tracking is recomputed on its own thread (TRACKING_WORKER; auto: on PostgreSQL). */
export function trackingOffThread(config: Pick<Config, 'trackingWorker'>, db: Db): boolean {
  return onItsOwnThread(config.trackingWorker, db);
}

/**
 * The service thread's side of the tracking's thread: what TrackingRefresh does, asked of the
 * thread. The thread is started on first use (a batch's trips, a read's refresh, or a pass of the
 * worker that finds trips marked): an app that never tracks starts none.
 */
export class TrackingThread implements Tracking {
  readonly markTrips = markTrips;
  private readonly thread: ThreadClient<TrackingAsk, TrackingAnswer>;
  private readonly elsewhere: (o: RefreshFilter) => Promise<number>;
  private used = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: Pick<AppContext, 'config' | 'db' | 'log'>, private readonly intervalMs = 5000) {
    const { db, log, config } = ctx;
    if (!db.reopen) throw new Error('TRACKING_WORKER=on needs PostgreSQL (DATABASE_URL): the embedded database lives in the service thread');
    const setup: TrackingSetup = { ...db.reopen, poolSize: Math.min(THREAD_POOL_SIZE, config.databasePoolSize), nice: TRACKING_THREAD_NICE };
    this.thread = new ThreadClient({
      title: "the tracking's thread", besideUrl: import.meta.url, module: 'tracking-worker', setup, closeWithinMs: CLOSE_WITHIN_MS,
      onError: (err) => log.error({ err }, "the tracking's thread failed; it is started again at the next ask (the trips stay marked)"),
      onReport: (message) => log.warn({ thread: 'tracking' }, message),
    });
    this.elsewhere = async (o) => {
      this.used = true;
      return (await this.thread.ask({ op: 'refresh', o })).recomputed ?? 0;
    };
    db.kept.of(RecomputeElsewhere).to = this.elsewhere;
  }

  refreshSoon(groupId: string, trips: readonly TripRef[]): void {
    if (trips.length === 0) return;
    this.used = true;
    this.thread.tell({ op: 'soon', groupId, trips });
  }

  async start(): Promise<void> {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), this.intervalMs);
    this.timer.unref();
  }

  /** A pass of the worker on the thread; before the thread is used, only once trips are found marked (left by a restart). */
  private async sweep(): Promise<void> {
    try {
      if (!this.used) {
        if (!(await anyMarked(this.ctx.db))) return;
        this.used = true;
      }
      this.thread.tell({ op: 'sweep' });
    } catch (err) {
      this.ctx.log.warn({ err }, 'trip tracking worker failed');
    }
  }

  /** Stops the worker and ends the thread after its work under way; the handle's recomputations run on the service's thread again. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    const kept = this.ctx.db.kept.of(RecomputeElsewhere);
    if (kept.to === this.elsewhere) kept.to = undefined;
    await this.thread.close();
  }
}
