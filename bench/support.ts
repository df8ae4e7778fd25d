/** Shared pieces of the benchmark scripts: a fresh PostgreSQL schema, figures, memory sampling. */
import { randomBytes } from 'node:crypto';
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
