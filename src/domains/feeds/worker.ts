/**
 * The feeds' worker thread (feed-thread.ts says why and what it is asked): it holds each group's
 * last snapshot and what each output kept for its next build, on a database pool of its own
 * (its caches kept exact by its own change feed, as another instance's would be).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { openPostgres } from '../../platform/db/postgres.js';
import { nameThisThread } from '../../platform/os-threads.js';
import { UnderWay } from '../../platform/under-way.js';
import { scheduleMemoOf } from '../gtfs/schedule-memo.js';
import { finish, readSnapshot, type SnapshotSettings } from './cache.js';
import type { Answer, Ask, Finished, WorkerSetup } from './feed-thread.js';
import { positionsNow, type NetworkNow } from './network.js';
import { outputName, recipeOf, stopMonitoringDocument, type OutputSpec } from './outputs.js';
import { recordSamples, type SampleAsk } from '../predictions/samples.js';

/**
 * The tracking is read as the service's rounds left it: the worker does not recompute the trips
 * marked dirty (it would race the service's rounds for the same trips, on the same cores; a
 * city's worker spent 8 % of its busy time so). What the trips' feeds tell is then at most a round
 * behind the reports (docs/feeds.md).
 */
const AS_ROUNDS_LEFT = { recompute: false } as const;

/** The buffers moved to the service's thread: those that own their memory whole (a small one shares a pool's, and is copied). */
function movable(a: Answer): ArrayBuffer[] {
  if (!a.ok || !a.outputs) return [];
  const moved: ArrayBuffer[] = [];
  for (const [, f] of a.outputs) {
    for (const b of [f.body, f.gzip]) {
      if (b && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer && !moved.includes(b.buffer)) moved.push(b.buffer);
    }
  }
  return moved;
}

/** The worker's life: its database, the snapshots it holds, the asks it answers (state of the thread, in this function's scope). */
async function serve(port: MessagePort, setup: WorkerSetup) {
  nameThisThread('feeds');
  const db = await openPostgres({ connectionString: setup.connectionString, poolSize: setup.poolSize, schema: setup.schema });
  await db.changes.start();
  const settings: SnapshotSettings = { feeds: setup.feeds, predictions: setup.predictions };

  interface Group {
    net: NetworkNow | undefined;
    /** What each output's last build kept (Built.state), by name. */
    states: Map<string, unknown>;
  }
  const groups = new Map<string, Group>();
  const groupOf = (groupId: string) => groups.get(groupId) ?? groups.set(groupId, { net: undefined, states: new Map() }).get(groupId)!;

  async function build(g: Group, net: NetworkNow, name: string, spec: OutputSpec): Promise<Finished> {
    const b = await recipeOf(spec)(net, g.states.get(name));
    g.states.set(name, b.state);
    return finish(b);
  }

  /** The group's snapshot this worker holds, read at `now` when it holds none (it was started again). */
  async function held(groupId: string, now: number): Promise<NetworkNow> {
    const g = groupOf(groupId);
    return (g.net ??= await readSnapshot(db, groupId, new Date(now), settings, scheduleMemoOf(db), AS_ROUNDS_LEFT));
  }

  async function answer(ask: Exclude<Ask, { op: 'close' | 'samples' }>): Promise<Answer & { ok: true }> {
    const g = groupOf(ask.groupId);
    switch (ask.op) {
      case 'rebuild': {
        const started = performance.now();
        const net = await readSnapshot(db, ask.groupId, new Date(ask.now), settings, scheduleMemoOf(db), { ...AS_ROUNDS_LEFT, previous: g.net });
        const read = performance.now();
        const outputs: [string, Finished][] = [];
        const failed: [string, string][] = [];
        for (const [name, spec] of ask.outputs) {
          try {
            outputs.push([name, await build(g, net, name, spec)]);
          } catch (err) {
            failed.push([name, err instanceof Error ? err.stack ?? err.message : String(err)]);
          }
        }
        // What outputs no longer asked for kept is let go.
        const asked = new Set([...ask.outputs.map(([name]) => name), ...ask.kept]);
        for (const name of g.states.keys()) if (!asked.has(name)) g.states.delete(name);
        g.net = net;
        return { ok: true, head: { now: net.now.getTime(), timezone: net.timezone }, outputs, failed, took: { snapshotMs: read - started, outputsMs: performance.now() - read } };
      }
      case 'output': {
        const net = await held(ask.groupId, ask.now);
        if (outputName(ask.spec) !== ask.name) throw new Error(`output ${ask.name} asked with the spec of ${outputName(ask.spec)}`);
        return { ok: true, head: { now: net.now.getTime(), timezone: net.timezone }, outputs: [[ask.name, await build(g, net, ask.name, ask.spec)]] };
      }
      case 'positions': {
        const net = await positionsNow(db, ask.groupId, new Date(ask.now), settings.feeds.staleVehicleSeconds);
        const outputs: [string, Finished][] = [];
        for (const [name, spec] of ask.outputs) outputs.push([name, await build(g, net, name, spec)]);
        return { ok: true, head: { now: net.now.getTime(), timezone: net.timezone }, outputs };
      }
      case 'stop-monitoring': {
        const net = await held(ask.groupId, ask.now);
        return { ok: true, head: { now: net.now.getTime(), timezone: net.timezone }, document: await stopMonitoringDocument(db, net, ask.ask) };
      }
    }
  }

  /**
   * A round of the prediction sampler, on this thread's database, schedule and tracking (as the
   * rounds left it), sampling the snapshot it holds when recent. Its work goes on between the
   * asks a client waits on (`busy`): a city's round is 0.4–1.5 s of this thread's time once a
   * minute, which delayed the rebuild it fell beside by as much (bench/RESULTS.md, 2026-12-06).
   */
  async function sample(ask: SampleAsk): Promise<Answer & { ok: true }> {
    const now = new Date(ask.now);
    const served = (groupId: string) => groups.get(groupId)?.net;
    return { ok: true, recorded: await recordSamples({ db, clock: { now: () => now }, config: { predictions: setup.predictions } }, ask, { ...AS_ROUNDS_LEFT, served, busy }) };
  }

  // The asks a client waits on (a rebuild, an output, the positions, a stop's visits) under way:
  // the sampler's round goes on in between (recordSamples `busy`).
  const asks = new UnderWay();
  const busy = () => asks.busy();

  let closing = false;
  port.on('message', ([id, ask]: [number, Ask]) => {
    if (ask.op === 'close') {
      closing = true;
      void db.close().finally(() => process.exit(0));
      return;
    }
    if (closing) return;
    (ask.op === 'samples' ? sample(ask.ask) : asks.track(answer(ask))).then(
      (a) => port.postMessage([id, a], movable(a)),
      (err: unknown) => port.postMessage([id, { ok: false, message: err instanceof Error ? err.message : String(err) } satisfies Answer]),
    );
  });
}

await serve(parentPort!, workerData as WorkerSetup);
