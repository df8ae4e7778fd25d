/**
 * A worker thread of the service asked by message (the feeds' thread, feeds/feed-thread.ts; the
 * tracking's, trips/tracking-thread.ts): started on first use, started again after it failed,
 * closed with the service. Each ask is `[id, ask]` and each answer `[id, answer]`; `{ op: 'close' }`
 * asks the thread to close its database and end.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { WorkerMode } from '../config.js';
import type { Db } from './db/index.js';

/**
 * Whether work runs on a thread of its own (FEEDS_WORKER, TRACKING_WORKER): `on`, or `auto` on a
 * database another thread can open (PostgreSQL; the embedded one lives in the service's thread).
 */
export function onItsOwnThread(mode: WorkerMode, db: Db): boolean {
  return mode === 'on' || (mode === 'auto' && db.reopen !== undefined);
}

/** What a thread answers: its own fields when it did what it was asked, its error's message when not. */
export type ThreadAnswer<T> = ({ ok: true } & T) | { ok: false; message: string };

/**
 * The young generation of a worker thread's heap, in MB (V8 gives a third of it to each of its two
 * semi-spaces: 64 MB; its default is 16 MB each). The service's worker threads build a city's
 * network every few seconds, and most of the objects of one rebuild (its trips, calls, predictions,
 * tracking rows, the timetable's journeys) outlived the small default's scavenges, to be copied
 * and promoted: with 64 MB semi-spaces (bench/RESULTS.md, 2026-12-05, two city runs under
 * `--cpu-prof` back to back) the feeds' thread spent 13.5 % of its time in its collector against
 * 18.8 %, the tracking thread 8.0 % against 13.4 %, and a feeds rebuild took 6.3 s at the mean
 * against 11.3 s on that VM. Memory: the service's RSS 4.5 against 4.0 GB in that pair (the
 * larger young generation on its every thread there; here on the worker threads only).
 */
export const WORKER_YOUNG_GENERATION_MB = 192;

/**
 * The thread's module next to the module that asks it (`besideUrl`, its import.meta.url), and how
 * to start it: compiled (dist: `name`.js), or TypeScript (tests, tsx: `name`.ts) with tsx's loader
 * registered first (a worker does not inherit the loader of the thread that starts it).
 */
function workerOf(besideUrl: string, name: string, workerData: unknown): Worker {
  const resourceLimits: ResourceLimits = { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB };
  if (fileURLToPath(besideUrl).endsWith('.js')) return new Worker(new URL(`./${name}.js`, besideUrl), { workerData, resourceLimits });
  const entry = new URL(`./${name}.ts`, besideUrl).href;
  const tsx = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`, { eval: true, workerData, resourceLimits });
}

export interface ThreadOptions {
  /** What the thread is called in errors ("the feeds' worker thread"). */
  title: string;
  /** The module that asks (import.meta.url) and the thread's module beside it, without extension. */
  besideUrl: string;
  module: string;
  /** What the thread is started with (workerData). */
  setup: unknown;
  /** Told of a thread that failed or ended other than by close, and of a close that had to stop it. */
  onError: (err: unknown) => void;
  /** How long close waits for the thread to close its database and end before it stops it. */
  closeWithinMs: number;
  /** Told what the thread reports of its own accord (`[-1, { ok: false, message }]`: work it was told to do, which failed). */
  onReport?: (message: string) => void;
}

/** The service thread's side of a worker thread. */
export class ThreadClient<Ask extends { op: string }, Answer extends { ok: true }> {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  private lastId = 0;
  private closing = false;

  constructor(private readonly o: ThreadOptions) {}

  private started(): Worker {
    if (this.worker) return this.worker;
    const w = workerOf(this.o.besideUrl, this.o.module, this.o.setup);
    // The service closes it (close); an unref'd worker never keeps a process alive on its own.
    w.unref();
    const fail = (err: Error) => {
      if (this.worker !== w) return;
      this.worker = undefined;
      for (const p of this.waiting.values()) p.reject(err);
      this.waiting.clear();
    };
    w.on('message', ([id, answer]: [number, Answer | { ok: false; message: string }]) => {
      if (id === -1 && !answer.ok) return this.o.onReport?.(answer.message);
      const p = this.waiting.get(id);
      this.waiting.delete(id);
      if (!p) return;
      if (answer.ok) p.resolve(answer as Answer);
      else p.reject(new Error(answer.message));
    });
    w.on('error', (err) => {
      this.o.onError(err);
      fail(err);
    });
    w.on('exit', (code) => {
      const err = new Error(`${this.o.title} ended (exit code ${code})`);
      // Ended other than by close (its 'error' was reported already, or it was stopped from outside).
      if (this.worker === w && !this.closing) this.o.onError(err);
      fail(err);
    });
    this.worker = w;
    return w;
  }

  /**
   * Asks the thread; answers what it answered (an error it met rejects). Refused once closed: an
   * ask after close (work finishing late, a request of a closing app) would start a thread
   * nothing closes, with connections of its own.
   */
  ask(ask: Ask): Promise<Answer> {
    if (this.closing) return Promise.reject(new Error(`${this.o.title} is closed (asked ${ask.op})`));
    const w = this.started();
    const id = ++this.lastId;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      w.postMessage([id, ask]);
    });
  }

  /** Tells the thread to do something, without waiting for it (no answer comes); nothing once closed. */
  tell(ask: Ask): void {
    if (this.closing) return;
    this.started().postMessage([0, ask]);
  }

  /**
   * Ends the thread (after the asks under way). A thread that has not ended within closeWithinMs
   * is stopped (told to onError): its database's close waits for the queries under way, and one
   * waiting for a lock held elsewhere would hold the service's shutdown with it.
   */
  async close(): Promise<void> {
    this.closing = true;
    const w = this.worker;
    if (!w) return;
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage([0, { op: 'close' }]);
    const late = setTimeout(() => {
      this.o.onError(new Error(`${this.o.title} did not close within ${this.o.closeWithinMs} ms (a query under way): stopped`));
      void w.terminate();
    }, this.o.closeWithinMs);
    try {
      await exited;
    } finally {
      clearTimeout(late);
    }
  }
}
