/**
 * The tracking's thread (tracking-thread.ts says why and what it is asked): the refresh after
 * ingest and the worker (TrackingRefresh), and the reads' refreshes, on a database pool of its own
 * (its caches kept exact by its own change feed, as another instance's would be).
 */
import { setPriority } from 'node:os';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { openPostgres } from '../../platform/db/postgres.js';
import { nameThisThread, ownThreadId } from '../../platform/os-threads.js';
import type { ThreadAnswer } from '../../platform/thread.js';
import type { TrackingAnswer, TrackingAsk, TrackingSetup } from './tracking-thread.js';
import { refreshDirty, TrackingRefresh } from './tracking.js';

/** Lowers this thread's priority to `nice` (its own id: /proc/thread-self; TRACKING_THREAD_NICE); where that is not Linux, says so and runs at the process's. */
function lowerPriority(nice: number, warn: (what: string) => void): void {
  if (nice === 0) return;
  try {
    const id = ownThreadId();
    if (id === undefined) throw new Error('no /proc/thread-self to tell its own id');
    setPriority(id, nice);
  } catch (err) {
    warn(`the tracking's thread runs at the service's priority (its own could not be lowered: ${err instanceof Error ? err.message : String(err)})`);
  }
}

async function serve(port: MessagePort, setup: TrackingSetup) {
  nameThisThread('tracking');
  lowerPriority(setup.nice, (message) => port.postMessage([-1, { ok: false, message } satisfies ThreadAnswer<TrackingAnswer>]));
  const db = await openPostgres({ connectionString: setup.connectionString, poolSize: setup.poolSize, schema: setup.schema });
  await db.changes.start();
  const messageOf = (err: unknown) => (err instanceof Error ? err.stack ?? err.message : String(err));
  // A failed round or pass is told to the service's thread, which logs it (the trips stay marked).
  const warn = (o: { err: unknown }, what: string) => port.postMessage([-1, { ok: false, message: `${what}: ${messageOf(o.err)}` } satisfies ThreadAnswer<TrackingAnswer>]);
  const refresh = new TrackingRefresh({ db, log: { warn } });

  let closing = false;
  port.on('message', ([id, ask]: [number, TrackingAsk | { op: 'close' }]) => {
    if (closing) return;
    switch (ask.op) {
      case 'close':
        closing = true;
        void refresh.close().finally(() => db.close()).finally(() => process.exit(0));
        return;
      case 'soon':
        refresh.refreshSoon(ask.groupId, ask.trips);
        return;
      case 'sweep':
        refresh.sweep();
        return;
      case 'refresh':
        refreshDirty(db, ask.o).then(
          (recomputed) => port.postMessage([id, { ok: true, recomputed } satisfies ThreadAnswer<TrackingAnswer>]),
          (err: unknown) => port.postMessage([id, { ok: false, message: err instanceof Error ? err.message : String(err) } satisfies ThreadAnswer<TrackingAnswer>]),
        );
    }
  });
}

await serve(parentPort!, workerData as TrackingSetup);
