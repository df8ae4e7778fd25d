/** Shared pieces of the benchmark scripts: a fresh PostgreSQL schema, figures, memory sampling. */
import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { openDatabase, type Db } from '../src/platform/db/index.js';
import { migrate } from '../src/platform/db/migrate.js';

export const DATABASE_URL = process.env['DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema on the PostgreSQL server (dropped by `drop`), or an in-memory PGlite. */
export async function benchDatabase(engine: 'postgres' | 'pglite'): Promise<{ db: Db; schema?: string; drop: () => Promise<void> }> {
  if (engine === 'pglite') {
    const db = await openDatabase({ databaseUrl: undefined, dataDir: 'memory://', databasePoolSize: 1 });
    await migrate(db);
    return { db, drop: () => db.close() };
  }
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const db = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: '', databasePoolSize: 20 }, schema);
  await migrate(db);
  return {
    db,
    schema,
    drop: async () => {
      await db.close();
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

/** Samples the resident set size every 50 ms; `stop()` returns the peak in MB. */
export function peakMemory() {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  return {
    stop: () => {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage().rss);
      return Math.round(peak / 1024 / 1024);
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/**
 * A worker thread of a benchmark that answers asks by id (bench/consumer-worker.mjs,
 * bench/sender-worker.mjs): each ask is posted with a new `id`, and answered `{ id, ... }`, or
 * `{ id, error }` when it failed. The thread starts at the first ask, and again at the next ask
 * after it ended on an error (the asks waiting then are refused with it). It never keeps the
 * process alive; `close` ends it.
 */
export function askingThread<Ask extends object, Answer>(script: URL): { ask: (a: Ask) => Promise<Answer>; close: () => Promise<void> } {
  let worker: Worker | undefined;
  const waiting = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  let last = 0;
  const start = () => {
    const w = new Worker(script);
    w.unref();
    w.on('message', (m: Answer & { id: number; error?: string }) => {
      const asked = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error !== undefined) asked?.reject(new Error(m.error));
      else asked?.resolve(m);
    });
    w.on('error', (err) => {
      for (const asked of waiting.values()) asked.reject(err);
      waiting.clear();
      worker = undefined;
    });
    return w;
  };
  return {
    ask: (a) => {
      const w = (worker ??= start());
      const id = ++last;
      return new Promise<Answer>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        w.postMessage({ ...a, id });
      });
    },
    close: async () => {
      await worker?.terminate();
      worker = undefined;
    },
  };
}

/**
 * How fast this machine is now, for comparing runs made on different VMs (their speed differed up
 * to threefold from one session to the next): a fixed piece of work on this thread, the kind a
 * feed rebuild does, in ms of wall time, best of three. `xml`: 5 MB of SIRI-like text written and
 * deflated at level 3 eight times; `objects`: 300,000 small objects made, kept in a map and walked.
 */
export function machineSpeed(): { xmlMs: number; objectsMs: number } {
  const best = (work: () => unknown) => {
    let min = Infinity;
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      work();
      min = Math.min(min, performance.now() - t0);
    }
    return min;
  };
  const xml = () => {
    const parts: string[] = [];
    // Ids and times varied as a network's are (a fixed sequence: the same text on every machine).
    let r = 12_345;
    const next = () => (r = (r * 1_103_515_245 + 12_345) % 2_147_483_648);
    for (let i = 0; parts.length < 20_000; i++) {
      parts.push(`<EstimatedCall><StopPointRef>MTA_${next() % 999_983}</StopPointRef><DatedVehicleJourneyRef>MQ_D6-Weekday-${next() % 150_000}_SBS${next() % 99}</DatedVehicleJourneyRef><Order>${i % 60}</Order><AimedArrivalTime>2026-11-30T08:${String(i % 60).padStart(2, '0')}:00-05:00</AimedArrivalTime><ExpectedArrivalTime>2026-11-30T08:${String((i * 7) % 60).padStart(2, '0')}:30-05:00</ExpectedArrivalTime></EstimatedCall>`);
    }
    const text = Buffer.from(parts.join(''));
    let out = 0;
    for (let k = 0; k < 8; k++) out += deflateSync(text, { level: 3 }).length;
    return out;
  };
  const objects = () => {
    const m = new Map<string, { id: string; at: number; seq: number; lat: number }>();
    for (let i = 0; i < 300_000; i++) m.set(`t${i}`, { id: `t${i}`, at: 1_764_500_000_000 + i * 1000, seq: i % 60, lat: 40 + (i % 1000) / 1000 });
    let sum = 0;
    for (const v of m.values()) sum += v.seq + v.lat;
    return sum;
  };
  return { xmlMs: best(xml), objectsMs: best(objects) };
}

export const describeSpeed = (s: { xmlMs: number; objectsMs: number }) => `machine speed (bench/support.ts machineSpeed, lower is faster): text and deflate ${fmt(s.xmlMs)} ms, objects ${fmt(s.objectsMs)} ms`;
