/**
 * The service as bench:network runs it (a child process, so its CPU and memory are measured apart
 * from the load generator): what `transit-ops serve` does, configured by the same environment,
 * with one difference: the clock is the system clock moved by BENCH_CLOCK_OFFSET_MS, so that the
 * service lives at the feed's morning peak whatever the hour of the run (the simulator is given
 * the same offset, so both agree on "now"). The service has no such setting: a shifted clock is a
 * benchmark's need, not an operator's. It also prints, every second, the longest delay of its
 * event loop in that second (a request waits that long behind whatever held the loop), and the
 * garbage collector's longest pause and its total pauses in that second (major collections apart:
 * what of the holds the collector makes).
 */
import { constants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Clock } from '../src/platform/clock.js';
import { openDatabase } from '../src/platform/db/index.js';
import { migrate } from '../src/platform/db/migrate.js';
import { bootstrapSuperuser } from '../src/domains/users/service.js';

const offset = Number(process.env['BENCH_CLOCK_OFFSET_MS'] ?? 0);
const clock: Clock = { now: () => new Date(Date.now() + offset) };
const config = loadConfig();
const db = await openDatabase(config);
await migrate(db);
const app = await buildApp({ config, db, clock });
await bootstrapSuperuser(app.ctx);
const stop = async () => {
  await app.close();
  await db.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
await app.listen({ port: config.port, host: '127.0.0.1' });
// The parent waits for this line.
console.log(`listening ${(app.server.address() as { port: number }).port}`);
// How long the event loop was held (every request waits behind it): the longest delay of each second, for the parent.
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
const gc = { max: 0, total: 0, majorMax: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.max = Math.max(gc.max, e.duration);
    gc.total += e.duration;
    if ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.majorMax = Math.max(gc.majorMax, e.duration);
  }
}).observe({ entryTypes: ['gc'] });
setInterval(() => {
  console.log(`eventloop ${Math.round(delay.max / 1e6)}`);
  console.log(`gc ${Math.round(gc.max)} ${Math.round(gc.total)} ${Math.round(gc.majorMax)}`);
  delay.reset();
  Object.assign(gc, { max: 0, total: 0, majorMax: 0 });
}, 1000).unref();
