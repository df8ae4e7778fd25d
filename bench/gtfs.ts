/**
 * npm run bench:gtfs: generates a large synthetic GTFS feed (at least 2 million stop_times) in a
 * temporary folder, imports it on PGlite and on PostgreSQL, and prints stop_times per second and
 * the peak memory (RSS) of the importing process.
 *
 * Each import runs in a child process of its own, so the peak RSS is the import's alone (not
 * the generator's). PostgreSQL: DATABASE_URL, or postgres://postgres@127.0.0.1:5432/test, in a
 * fresh schema dropped afterwards. PGlite: a database folder in the temporary folder (on disk,
 * so the database itself is not counted in the process memory).
 *
 *   npm run bench:gtfs                      both engines
 *   npm run bench:gtfs -- --engine postgres one engine
 *   npm run bench:gtfs -- --stop-times 500000 --engine pglite
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { appContext } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/platform/clock.js';
import { openDatabase } from '../src/platform/db/index.js';
import { migrate } from '../src/platform/db/migrate.js';
import { createGroup } from '../src/domains/groups/service.js';
import { importGtfs } from '../src/domains/gtfs/import/importer.js';
import { tripStopTimes, tripsOnServiceDate } from '../src/domains/gtfs/service-days.js';
import { DEFAULT_SIZE, writeSyntheticFeed } from './synthetic-feed.js';

const DEFAULT_PG = 'postgres://postgres@127.0.0.1:5432/test';

interface Measure {
  engine: string;
  stopTimes: number;
  seconds: number;
  stopTimesPerSecond: number;
  rowsPerSecond: number;
  peakRssMb: number;
  /** RSS before the import starts (Node, tsx and the modules). */
  baselineRssMb: number;
  /** tripsOnServiceDate on a weekday of the feed: trips found and milliseconds (median of 5). */
  dayTrips: number;
  dayMs: number;
  /** tripStopTimes of one trip, milliseconds (median of 20). */
  stopTimesMs: number;
}

/** Child: imports one zip on one engine and prints its measure as JSON. */
async function importOnce(zip: string, engine: 'pglite' | 'postgres', place: string): Promise<Measure> {
  const config = { ...loadConfig({}), logLevel: 'silent' as const, databaseUrl: engine === 'postgres' ? place.split('#')[0] : undefined, dataDir: place };
  const db = await openDatabase(config, engine === 'postgres' ? place.split('#')[1] : undefined);
  try {
    await migrate(db);
    const ctx = appContext({ config, db, clock: systemClock, log: pino({ level: 'silent' }) });
    await createGroup(ctx, { group_id: 'bench', name: 'Bench', timezone: 'Europe/Paris' });
    const baselineRssMb = process.memoryUsage().rss / 1024 / 1024;
    const start = process.hrtime.bigint();
    const result = await importGtfs(ctx, 'bench', zip, { name: 'bench' });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const stopTimes = result.counts['stop_times'] ?? 0;
    const rows = Object.values(result.counts).reduce((a, b) => a + b, 0);
    if (result.warning_count > 0) console.error(`warnings: ${JSON.stringify(result.warnings.slice(0, 5))}`);
    const peakRssMb = process.resourceUsage().maxRSS / 1024;
    const read = { gtfsId: result.gtfs_id };
    let dayTrips = 0;
    const dayMs = await median(5, async () => {
      dayTrips = (await tripsOnServiceDate(db, 'bench', '2026-03-02', read)).trips.length;
    });
    const stopTimesMs = await median(20, async () => {
      await tripStopTimes(db, 'bench', '2026-03-02', 'T1234', read);
    });
    return { engine, stopTimes, seconds, stopTimesPerSecond: stopTimes / seconds, rowsPerSecond: rows / seconds, peakRssMb, baselineRssMb, dayTrips, dayMs, stopTimesMs };
  } finally {
    await db.close();
  }
}

async function median(runs: number, fn: () => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

async function main() {
  const { values } = parseArgs({
    options: {
      engine: { type: 'string' },
      'stop-times': { type: 'string' },
      child: { type: 'string' },
      place: { type: 'string' },
    },
  });
  if (values.child) {
    console.log(JSON.stringify(await importOnce(values.child, values.engine as 'pglite' | 'postgres', values.place!)));
    return;
  }

  const wanted = Number(values['stop-times'] ?? 2_000_000);
  const routes = Math.max(1, Math.ceil(wanted / (DEFAULT_SIZE.tripsPerRoute * DEFAULT_SIZE.stopsPerTrip)));
  const engines = values.engine ? [values.engine] : ['pglite', 'postgres'];
  const work = mkdtempSync(join(tmpdir(), 'transit-ops-bench-gtfs-'));
  try {
    const zip = join(work, 'synthetic.zip');
    const t0 = Date.now();
    const feed = await writeSyntheticFeed(zip, { ...DEFAULT_SIZE, routes });
    console.log(`synthetic feed: ${feed.stopTimes} stop_times, ${feed.trips} trips, ${routes} routes, ${DEFAULT_SIZE.services} calendars; zip ${(statSync(zip).size / 1e6).toFixed(1)} MB, written in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const results: Measure[] = [];
    for (const engine of engines) {
      let place: string;
      let cleanup = async () => {};
      if (engine === 'postgres') {
        const url = process.env['DATABASE_URL'] || DEFAULT_PG;
        const schema = `bench_gtfs_${process.pid}`;
        await withClient(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
        place = `${url}#${schema}`;
        cleanup = () => withClient(url, (c) => c.query(`DROP SCHEMA ${schema} CASCADE`)).then(() => {});
      } else {
        place = join(work, 'pglite');
      }
      try {
        const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', zip, '--engine', engine, '--place', place], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 });
        if (child.status !== 0) throw new Error(`the ${engine} import failed (exit ${child.status})`);
        results.push(JSON.parse(child.stdout.trim().split('\n').pop()!) as Measure);
      } finally {
        await cleanup();
      }
    }
    console.log('');
    console.log('engine    stop_times  seconds  stop_times/s  all rows/s  peak RSS  (RSS before the import)');
    for (const r of results) {
      console.log(`${r.engine.padEnd(9)} ${String(r.stopTimes).padStart(10)}  ${r.seconds.toFixed(1).padStart(7)}  ${Math.round(r.stopTimesPerSecond).toString().padStart(12)}  ${Math.round(r.rowsPerSecond).toString().padStart(10)}  ${r.peakRssMb.toFixed(0).padStart(5)} MB  (${r.baselineRssMb.toFixed(0)} MB)`);
    }
    console.log('');
    for (const r of results) {
      console.log(`${r.engine}: trips of a service date (${r.dayTrips} trips, frequencies expanded) in ${r.dayMs.toFixed(0)} ms; stop times of one trip in ${r.stopTimesMs.toFixed(1)} ms`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

await main();
