/**
 * npm run bench:ingest: sustained device reports on PostgreSQL. 2,000 simulated devices, each
 * signed on, send batches of trip events and positions through the real HTTP device API (device
 * API keys); a worker thread drives the load so the server keeps its own event loop. Prints items
 * per second and batch latency percentiles (the HTTP round trip, which includes the commit).
 * Target on a 2-core machine: ≥ 20,000 items/s with p99 under 200 ms.
 *
 * Two phases of SECONDS each, on the same server, in this order:
 * - saturated: CONCURRENCY requests at a time as fast as the server answers (closed loop): the
 *   most it takes; the latency is then mostly the queue of those requests (Little's law). It
 *   also warms the server up;
 * - sustained: batches offered at RATE items/s on a fixed schedule, as devices send (open loop);
 *   a batch's latency runs from the time it was due, so falling behind shows in the p99. This is
 *   the target's question: does the service take 20,000 items/s with p99 under 200 ms? The
 *   tracking of what the first phase stored is still being worked off during it.
 *
 * Options (env): DEVICES (2000), SECONDS (20), RATE (20000; 0 skips the phase), CONCURRENCY (48;
 * 0 skips the phase), BATCH (50), DATABASE_URL.
 */
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { createApiKey, hostPrincipal, wholeGroup } from '../src/domains/auth/service.js';
import { createGroup } from '../src/domains/groups/service.js';
import { benchDatabase, fmt, peakMemory } from './support.js';

const DEVICES = Number(process.env['DEVICES'] ?? 2000);
const SECONDS = Number(process.env['SECONDS'] ?? 20);
const CONCURRENCY = Number(process.env['CONCURRENCY'] ?? 48);
const RATE = Number(process.env['RATE'] ?? 20_000);
const BATCH = Number(process.env['BATCH'] ?? 50);

interface WorkerInput {
  url: string;
  keys: string[];
  seconds: number;
  concurrency: number;
  batch: number;
  /** Items per second offered on a schedule (open loop), or null: `concurrency` at a time (closed loop). */
  rate: number | null;
}

interface LoadResult {
  items: number;
  errors: number;
  batches: number;
  elapsed: number;
  p50: number;
  p95: number;
  p99: number;
  worst: number[];
}

function drive(input: WorkerInput): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    // The load runs in plain JavaScript on a worker thread: the server keeps its event loop.
    const w = new Worker(new URL('./ingest-load.mjs', import.meta.url), { workerData: input });
    w.once('message', resolve);
    w.once('error', reject);
  });
}

async function main() {
  const { db, drop } = await benchDatabase('postgres');
  const config = testConfig({ logLevel: 'silent', databasePoolSize: 20 });
  const app = await buildApp({ config, db, logger: false });
  try {
    const ctx = app.ctx;
    await createGroup(ctx, { group_id: 'bench', name: 'Bench network', timezone: 'Europe/Paris' });
    console.log(`setting up ${DEVICES} devices, their keys and duties…`);
    const keys: string[] = [];
    await db.query("INSERT INTO drivers (group_id, driver_id, driver_name, staff_number) SELECT 'bench', lpad(to_hex(i), 24, '0'), 'Driver ' || i, 'S' || i FROM generate_series(1, $1) i", [DEVICES]);
    await db.query("INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate) SELECT 'bench', 'V' || i, 'F' || i, 'P' || i FROM generate_series(1, $1) i", [DEVICES]);
    await db.query("INSERT INTO devices (group_id, device_id) SELECT 'bench', 'D' || i FROM generate_series(1, $1) i", [DEVICES]);
    for (let i = 1; i <= DEVICES; i++) keys.push((await createApiKey(ctx, hostPrincipal, wholeGroup('bench'), { device_id: `D${i}` })).value);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/v4/groups/bench/device/reports`;
    for (let i = 1; i <= DEVICES; i++) {
      const signOn = { id: randomUUID(), type: 'sign_on', at: '2026-06-01T04:55:00Z', driver_id: (i).toString(16).padStart(24, '0'), vehicle_id: `V${i}` };
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': keys[i - 1]! }, body: JSON.stringify({ items: [signOn] }) });
      if (r.status !== 200) throw new Error(`sign-on failed: ${r.status} ${await r.text()}`);
    }
    // Saturated first: it also warms the server up (JIT, prepared statements, pool connections),
    // which the open loop would otherwise charge to its first seconds as a backlog.
    const phases = [
      ...(CONCURRENCY > 0 ? [{ name: `saturated, ${CONCURRENCY} requests at a time`, rate: null }] : []),
      ...(RATE > 0 ? [{ name: `sustained, ${fmt(RATE)} items/s offered`, rate: RATE }] : []),
    ];
    let before = 0;
    for (const phase of phases) {
      console.log(`driving ${SECONDS} s of load (${phase.name}), batches of ${BATCH} items (positions and trip events)…`);
      const memory = peakMemory();
      const cpu0 = process.cpuUsage();
      const result = await drive({ url, keys, seconds: SECONDS, concurrency: CONCURRENCY, batch: BATCH, rate: phase.rate });
      const cpu = process.cpuUsage(cpu0);
      const stored = (await db.query<{ n: number }>('SELECT (SELECT count(*) FROM positions) + (SELECT count(*) FROM trip_events) AS n'))[0]!.n;
      console.log('');
      console.log(`phase                   ${phase.name}`);
      console.log(`devices                 ${fmt(DEVICES)}`);
      console.log(`batches                 ${fmt(result.batches)} (${fmt(result.errors)} errors)`);
      console.log(`items stored            ${fmt(result.items)} (new rows in the database: ${fmt(stored - before)})`);
      console.log(`throughput              ${fmt(result.items / result.elapsed)} items/s, ${fmt(result.batches / result.elapsed)} batches/s`);
      console.log(`batch latency           p50 ${fmt(result.p50, 1)} ms, p95 ${fmt(result.p95, 1)} ms, p99 ${fmt(result.p99, 1)} ms`);
      console.log(`worst latency by second ${result.worst.join(' ')} ms`);
      console.log(`server process CPU      ${fmt(((cpu.user + cpu.system) / 1e6 / result.elapsed) * 100)} % of one core (server and load worker threads)`);
      console.log(`peak memory (RSS)       ${memory.stop()} MB`);
      console.log('');
      before = stored;
    }
  } finally {
    await app.close();
    await drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
