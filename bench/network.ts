/**
 * npm run bench:network -- --feed mta-queens|mta-bus-all|demo --minutes N (issue #16): a whole
 * network live on one machine, measured as its operator and its passengers would see it.
 *
 * 1. The feed: the MTA's (bench/mta-feeds.ts, built from the npm package into a cache outside
 *    git) or the demo network's.
 * 2. A fresh PostgreSQL database of its own (DATABASE_URL's server, default 127.0.0.1:5432),
 *    dropped at the end (--keep keeps it).
 * 3. The service as a child process (bench/network-server.ts: `serve` with a clock moved to the
 *    feed's morning peak), so its CPU and memory are measured apart from this load generator.
 *    The feed is imported and published through the real API (the import timed).
 * 4. The simulator at the peak: one vehicle per block running then, each reporting through the
 *    device API every --period seconds (15), the service and the simulator on the same shifted
 *    clock; after its start (provisioning, the morning so far), measured for --minutes N (10).
 * 5. Every 30 s and at the end: items/s and batch p50/p99 (posted and timed on a thread of their
 *    own, sender-worker.mjs, as devices would: the simulator's holds apart; also as the
 *    simulator's thread saw them); tracking lag (report accepted →
 *    visible in the trip object, and in vehicle-positions); the trip object of a trip in progress
 *    read once a second (--trip-reads); the four passenger feeds (GTFS-RT vehicle-positions and trip-updates, SIRI vehicle-monitoring and estimated-timetable) fetched
 *    by a consumer polling each every 5 s (Accept-Encoding: gzip; latency: request to last byte,
 *    inflating apart, timed on a worker thread of its own: consumer-worker.mjs): latency p50/p99, size inflated and on the wire, freshness (header age of vehicle-positions, of trip-updates and of the SIRI timetable, position
 *    age), the age of trip-updates and of the timetable served at any instant (their headers
 *    peeked every PEEK_MS: peekFeed; the 5-s consumer sees one phase of the rebuilds) and coverage (vehicles in the feed / vehicles that reported within the stale window
 *    before the snapshot; trips in TripUpdates / trips in progress at the snapshot); trip object
 *    p99; live stream lag; the server's event loop holds (and the bench's own) and garbage collector pauses; CPU of the
 *    server, of the PostgreSQL backends of the bench database and of this load generator (its
 *    process, every thread, over the same window), and the server's threads' time on a CPU and
 *    waiting for one (its /metrics: main, feeds, tracking, other), the server's RSS; the database
 *    size per table group before and after; the day's export, three times. On a PostgreSQL server
 *    with autovacuum off, the bench does its work on the tables the service writes every minute, by
 *    its rules (--analyze).
 *
 * Options: --feed (mta-queens), --minutes (10), --date YYYY-MM-DD (a weekday of the feed; default
 * the next weekday from today), --at HH:MM (08:00, the feed's local time), --vehicles N (at most
 * N vehicles, the blocks running at --at first), --period S (15), --keep, --port (0: any),
 * --load sim (the network simulator, src/domains/simulate: provisions, sends each vehicle's
 * morning so far, then runs in real time) or replay (bench/network-replay.ts: the timetable
 * exactly, from the start instant, no backlog), --cpu-prof DIR (the service of the measured run
 * under `node --cpu-prof`: its profile is written into DIR when it stops; open it in Chrome's
 * DevTools, or summarise it with `npx tsx bench/cpu-profile.ts DIR/<file>.cpuprofile`),
 * --analyze autovacuum|minute (on a server whose autovacuum is off, as this machine's: what the bench does
 * in its stead, autovacuumPass; autovacuum by default), --history-days N (the N days before the measured one filled with copies of its morning so far,
 * bench/network-history.ts: the cost of a month of reports), --no-feeds (no feed consumer and no
 * feed-lag probe: the service without passenger feeds to rebuild, to tell their cost on the other
 * figures), --feeds LIST (the feeds the consumer polls, of vehicle-positions, trip-updates, siri-vm
 * and siri-et, all by default: an output nobody asks for is not rebuilt, so leaving one out tells
 * what its builds cost the others' freshness), --steady-after S (60: the figures are also given for the run after its first
 * window ending S seconds in or later, the steady state: the first minute still has the service
 * recomputing the morning the simulator's start sent; 0: not), --server-node-args="ARGS" (options
 * of the service's node, e.g. "--max-semi-space-size=64": its garbage collector tried),
 * --server-stdout FILE (the service's standard output appended to FILE as well: what its node
 * prints there, e.g. with --server-node-args="--trace-incremental-marking", what starts each full
 * collection of each of its threads' heaps),
 * --database-setting NAME=VALUE (repeatable: a PostgreSQL setting of the bench's database alone,
 * which the service's sessions take, e.g. wal_compression=lz4; one a session cannot set, such as
 * checkpoint_timeout, is refused by the server; log_min_duration_statement=20 puts the service's
 * statements of 20 ms or more in the server's log), --trip-reads N (the trip objects read a second by
 * the trip object reader, 1: its p99 over a 5-minute run is then its 3rd longest read; 4 gives a
 * steadier tail for comparing two runs), --load-nice N (0: this load generator's every thread set to
 * nice N once the measured run's service is started, the service left at the nice it was started
 * with: the devices and consumers it plays are other machines in a deployment, and at 19 it takes
 * the CPU the service leaves rather than a share of it; its own figures, batch latency as its
 * threads had the answers and the ages it reads, may then come late, never early), --help.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, setPriority, tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DateTime } from 'luxon';
import pg from 'pg';
import WebSocket from 'ws';
import { demoFeedZip } from '../src/domains/demo/feed.js';
import { generateNetwork } from '../src/domains/demo/network.js';
import { describeFigures, MTA_FEEDS, mtaFeedZip, type MtaFeed } from './mta-feeds.js';
import type { BatchSeen, LoadSource } from './network-replay.js';
import { loadHistory } from './network-history.js';
import { askingThread, DATABASE_URL, describeSpeed, fmt, machineSpeed, percentile } from './support.js';

const { values: args } = parseArgs({
  options: {
    feed: { type: 'string', default: 'mta-queens' },
    minutes: { type: 'string', default: '10' },
    date: { type: 'string' },
    at: { type: 'string', default: '08:00' },
    vehicles: { type: 'string' },
    period: { type: 'string', default: '15' },
    keep: { type: 'boolean', default: false },
    port: { type: 'string', default: '0' },
    load: { type: 'string', default: 'sim' },
    'cpu-prof': { type: 'string' },
    'server-node-args': { type: 'string', default: '' },
    'server-stdout': { type: 'string' },
    'history-days': { type: 'string', default: '0' },
    'no-feeds': { type: 'boolean', default: false },
    feeds: { type: 'string', default: 'vehicle-positions,trip-updates,siri-vm,siri-et' },
    'steady-after': { type: 'string', default: '60' },
    analyze: { type: 'string', default: 'autovacuum' },
    'database-setting': { type: 'string', multiple: true, default: [] },
    'trip-reads': { type: 'string', default: '1' },
    'load-nice': { type: 'string', default: '0' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  // The options are described at the top of this file.
  const text = readFileSync(new URL(import.meta.url), 'utf8');
  console.log(text.slice(text.indexOf('/**') + 3, text.indexOf('*/')).replace(/^ \* ?/gm, '').trim());
  process.exit(0);
}
const FEED = args.feed!;
if (FEED !== 'demo' && !(FEED in MTA_FEEDS)) throw new Error(`--feed: demo or one of ${Object.keys(MTA_FEEDS).join(', ')}`);
const MINUTES = Number(args.minutes);
const PERIOD_S = Number(args.period);
const MAX_VEHICLES = args.vehicles ? Number(args.vehicles) : Infinity;
const HISTORY_DAYS = Number(args['history-days']);
const DATABASE_SETTINGS = args['database-setting']!.map((setting) => {
  const [, name, value] = /^([a-z_.]+)=([A-Za-z0-9_.]+)$/.exec(setting) ?? [];
  if (!name || value === undefined) throw new Error(`--database-setting ${setting}: NAME=VALUE (a PostgreSQL setting, e.g. wal_compression=lz4)`);
  return [name, value] as const;
});
const STEADY_AFTER_S = Number(args['steady-after']);
const TRIP_READS = Number(args['trip-reads']);
if (!(TRIP_READS > 0 && TRIP_READS <= 20)) throw new Error(`--trip-reads ${args['trip-reads']}: trip objects read a second, more than 0 and at most 20`);
const LOAD_NICE = Number(args['load-nice']);
if (!(Number.isInteger(LOAD_NICE) && LOAD_NICE >= 0 && LOAD_NICE <= 19)) throw new Error(`--load-nice ${args['load-nice']}: a nice value from 0 to 19`);
const GROUP = 'netbench';
const ADMIN = { email: 'netbench@transit-ops.example', password: `netbench-${randomBytes(6).toString('hex')}` };
const STALE_S = 300;
const log = (m: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${m}`);

// ---- Figures ----------------------------------------------------------------------------------

/** Samples with the real time they were taken, so each 30 s window and the whole run read them. */
class Series {
  private readonly samples: { t: number; v: number }[] = [];
  add(v: number, t = Date.now()) {
    this.samples.push({ t, v });
  }
  values(since = 0): number[] {
    return this.samples.filter((s) => s.t >= since).map((s) => s.v).sort((a, b) => a - b);
  }
  count(since = 0) {
    return this.samples.reduce((n, s) => n + (s.t >= since ? 1 : 0), 0);
  }
  sum(since = 0) {
    return this.samples.reduce((n, s) => n + (s.t >= since ? s.v : 0), 0);
  }
  /** "p50 / p99 (n)" of the samples since `since`. */
  describe(since = 0, unit = 'ms', digits = 0) {
    const v = this.values(since);
    if (v.length === 0) return '—';
    return `${fmt(percentile(v, 50), digits)} / ${fmt(percentile(v, 99), digits)} ${unit} (n ${fmt(v.length)}, max ${fmt(v[v.length - 1]!, digits)})`;
  }
}

const F = {
  items: new Series(), // accepted items per batch
  batchMs: new Series(),
  /** The same batches from their send to when the simulator's thread had the answer (its own holds included). */
  batchSeenMs: new Series(),
  batchFailures: new Series(),
  lagTripObject: new Series(),
  lagTripObjectMissed: new Series(),
  lagFeed: new Series(),
  liveLag: new Series(),
  tripObjectMs: new Series(),
  tripReadMs: new Series(),
  feedMs: new Map<string, Series>(),
  feedBytes: new Map<string, Series>(),
  /** Bytes on the wire (gzipped when the service gives it so: the consumer asks for gzip and inflates apart). */
  feedWireBytes: new Map<string, Series>(),
  headerAge: new Series(),
  /** trip-updates' header age: the trips' snapshot, which a late rebuild holds back while the positions are refreshed on their own. */
  tripsHeaderAge: new Series(),
  /** The SIRI EstimatedTimetable's (its ResponseTimestamp): built after the others of a rebuild. */
  timetableHeaderAge: new Series(),
  /** The age of the feed served at every instant (peekFeed: each feed's headers every PEEK_MS), by feed. */
  servedAge: new Map<string, Series>(),
  positionAge: new Series(),
  /** From a feed's last byte to its figures taken here (decoding it, this thread's turn): left out of the header ages since 2026-12-04 20:30. */
  consumerMs: new Series(),
  coverageVehicles: new Series(),
  coverageTrips: new Series(),
  buildUpperBound: new Series(),
  /** The same for trip-updates, polled every 5 s by the consumer (so up to 5 s later than it could be seen). */
  tripsBuildUpperBound: new Series(),
  /** The bench's passes in autovacuum's stead (when the server's autovacuum is off): each pass's time. */
  analyzeMs: new Series(),
  /** …the tables each pass analysed, and vacuumed. */
  analyzedTables: new Series(),
  vacuumedTables: new Series(),
  /** The longest event loop delay of the server in each second. */
  eventLoopMs: new Series(),
  /** This process's own event loop (the load generator's and the consumers'): its holds delay what it measures. */
  benchLoopMs: new Series(),
  /** The garbage collector's longest pause in each second, its pauses in all in that second, its longest major pause. */
  gcPauseMs: new Series(),
  gcTotalMs: new Series(),
  gcMajorMs: new Series(),
};

// ---- The service ------------------------------------------------------------------------------

let child: ChildProcess | null = null;
let baseUrl = '';

async function startServer(databaseUrl: string, offsetMs: number, profile = false): Promise<void> {
  const prof = profile && args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : [];
  const nodeArgs = args['server-node-args'].split(' ').filter((a) => a !== '');
  child = spawn(process.execPath, [...nodeArgs, ...prof, '--import', 'tsx', 'bench/network-server.ts'], {
    env: {
      ...process.env, DATABASE_URL: databaseUrl, PORT: args.port, BENCH_CLOCK_OFFSET_MS: String(offsetMs), LOG_LEVEL: 'warn', TRANSIT_OPS_DEMO: '0',
      TRANSIT_OPS_SUPERUSER_EMAIL: ADMIN.email, TRANSIT_OPS_SUPERUSER_PASSWORD: ADMIN.password,
      // The simulator provisions a device key per vehicle: thousands in a minute.
      RATE_LIMIT_API_KEYS_PER_MINUTE: '1000000', RATE_LIMIT_LOGIN_PER_MINUTE: '100000',
      GTFS_MAX_UPLOAD_BYTES: String(2 * 1024 ** 3),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (args['server-stdout']) child.stdout!.pipe(createWriteStream(args['server-stdout'], { flags: 'a' }));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child!.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
      for (const line of out.split('\n').slice(0, -1)) {
        const d = /^eventloop (\d+)/.exec(line);
        if (d && running) F.eventLoopMs.add(Number(d[1]));
        const gc = /^gc (\d+) (\d+) (\d+)/.exec(line);
        if (gc && running) {
          F.gcPauseMs.add(Number(gc[1]));
          F.gcTotalMs.add(Number(gc[2]));
          F.gcMajorMs.add(Number(gc[3]));
        }
      }
      out = out.slice(out.lastIndexOf('\n') + 1);
    });
    child!.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening`)));
  });
  baseUrl = `http://127.0.0.1:${port}`;
}

async function stopServer(): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child!.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  child = null;
}

let token = '';
async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const isBuffer = Buffer.isBuffer(body);
  const res = await fetch(`${baseUrl}/api/v4${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': isBuffer ? 'application/zip' : 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: isBuffer ? (body as Buffer) : JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(600_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 400)}`);
  return (text ? JSON.parse(text) : null) as T;
}

async function login(): Promise<void> {
  const res = await fetch(`${baseUrl}/api/v4/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(ADMIN).toString() });
  if (!res.ok) throw new Error(`login: ${res.status} ${await res.text()}`);
  token = ((await res.json()) as { session_id: string }).session_id;
}

// ---- CPU and memory ---------------------------------------------------------------------------

const TICK = 100; // clock ticks a second (USER_HZ)
function cpuTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return null;
  }
}
/** The parts of the feeds' rebuilds (src/domains/feeds/cache.ts RebuildTimes), by part: seconds in all, and how many. */
type RebuildParts = Map<string, { sum: number; count: number }>;

/** The service's threads' times (src/platform/os-threads.ts), by thread: seconds on a CPU and waiting for one, since each started. */
type ThreadParts = Map<string, { cpu: number; wait: number }>;

/**
 * What the service's /metrics tells at this instant: its rebuild histogram
 * (transit_ops_feed_rebuild_seconds) and its threads' times (transit_ops_thread_*_seconds_total).
 */
async function serviceMetrics(baseUrl: string): Promise<{ rebuilds: RebuildParts; threads: ThreadParts }> {
  const text = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(60_000) }).then((r) => r.text());
  const rebuilds: RebuildParts = new Map();
  for (const m of text.matchAll(/^transit_ops_feed_rebuild_seconds_(sum|count)\{part="([a-z]+)"\} (\S+)$/gm)) {
    const p = rebuilds.get(m[2]!) ?? { sum: 0, count: 0 };
    p[m[1] as 'sum' | 'count'] = Number(m[3]);
    rebuilds.set(m[2]!, p);
  }
  const threads: ThreadParts = new Map();
  for (const m of text.matchAll(/^transit_ops_thread_(cpu|wait)_seconds_total\{thread="([a-z]+)"\} (\S+)$/gm)) {
    const t = threads.get(m[2]!) ?? { cpu: 0, wait: 0 };
    t[m[1] as 'cpu' | 'wait'] = Number(m[3]);
    threads.set(m[2]!, t);
  }
  return { rebuilds, threads };
}

/**
 * The service's threads between two instants, in % of one core: on a CPU / ready but waiting for
 * one. A thread that waits about as long as it runs takes about twice its work's time.
 */
function describeThreads(from: ThreadParts, to: ThreadParts, seconds: number): string {
  if (to.size === 0) return '— (not told: the kernel has no schedstat)';
  const pct = (x: number) => fmt((100 * x) / seconds, 1);
  return ['main', 'feeds', 'tracking', 'other']
    .filter((name) => to.has(name))
    .map((name) => {
      const a = from.get(name) ?? { cpu: 0, wait: 0 };
      const b = to.get(name)!;
      return `${name} ${pct(b.cpu - a.cpu)} / ${pct(b.wait - a.wait)}`;
    })
    .join(', ');
}

/** The rebuilds ended between two instants: how many, and each part's mean. */
function describeRebuilds(from: RebuildParts, to: RebuildParts): string {
  const d = (part: string) => ({ sum: (to.get(part)?.sum ?? 0) - (from.get(part)?.sum ?? 0), count: (to.get(part)?.count ?? 0) - (from.get(part)?.count ?? 0) });
  const n = d('total').count;
  if (n === 0) return 'none ended';
  const mean = (part: string) => (d(part).count > 0 ? `${(d(part).sum / d(part).count).toFixed(2)} s` : '—');
  return `${n} ended; mean snapshot read ${mean('snapshot')}, outputs ${mean('outputs')}, served at ${mean('served')}, then built last (SIRI ET) ${mean('last')}, total ${mean('total')}, idle before ${mean('idle')}`;
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** CPU seconds of the server, of the PostgreSQL backends connected to the bench database, and of this process (the load generator: user and system, every thread). */
class CpuMeter {
  private server = 0;
  private readonly backends = new Map<number, number>();
  private backendGone = 0;
  constructor(private readonly admin: pg.Client, private readonly database: string) {}
  async sample(): Promise<{ serverS: number; postgresS: number; benchS: number }> {
    const mine = process.cpuUsage();
    if (child?.pid) this.server = cpuTicks(child.pid) ?? this.server;
    const { rows } = await this.admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [this.database]);
    const alive = new Set(rows.map((r) => r.pid));
    for (const [pid, ticks] of this.backends) if (!alive.has(pid)) {
      this.backendGone += ticks;
      this.backends.delete(pid);
    }
    // Backends started before the meter count from their start: the meter starts before the load.
    for (const pid of alive) {
      const t = cpuTicks(pid);
      if (t !== null) this.backends.set(pid, t);
    }
    let pgTicks = this.backendGone;
    for (const t of this.backends.values()) pgTicks += t;
    return { serverS: this.server / TICK, postgresS: pgTicks / TICK, benchS: (mine.user + mine.system) / 1e6 };
  }
}

/**
 * What PostgreSQL is busy with: the active statements of the bench database sampled every second
 * (pg_stat_statements is not loaded on the machine's server); each sample is a backend-second.
 */
class QueryProfile {
  private readonly counts = new Map<string, number>();
  samples = 0;
  constructor(private readonly admin: pg.Client, private readonly database: string) {}
  async sample(): Promise<void> {
    const { rows } = await this.admin.query<{ query: string; wait: string | null }>(
      `SELECT query, wait_event_type || ':' || wait_event AS wait FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`, [this.database]);
    this.samples++;
    for (const r of rows) {
      const key = `${r.query.replace(/\s+/g, ' ').trim().slice(0, 140)}${r.wait ? `  [waiting ${r.wait}]` : ''}`;
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    }
  }
  top(n: number): string[] {
    return [...this.counts].sort((a, b) => b[1] - a[1]).slice(0, n).map(([q, c]) => `${fmt(c / Math.max(1, this.samples), 2)} backends on average: ${q}`);
  }
}

// ---- Database size ----------------------------------------------------------------------------

/**
 * The server's WAL so far (pg_stat_wal, the whole server's: the bench's database is all it writes
 * during a run) and its checkpoints (pg_stat_bgwriter): a device batch's commit waits for its WAL
 * to be flushed, and after each checkpoint a page's first change is written whole (a full-page
 * image). bench/wal-by-relation.ts tells which relations.
 */
async function walStats(c: pg.Client) {
  const { rows } = await c.query<{ records: string; fpi: string; bytes: string; syncs: string; checkpoints: string }>(
    'SELECT w.wal_records AS records, w.wal_fpi AS fpi, w.wal_bytes AS bytes, w.wal_sync AS syncs, b.checkpoints_timed + b.checkpoints_req AS checkpoints FROM pg_stat_wal w, pg_stat_bgwriter b',
  );
  const r = rows[0]!;
  return { records: Number(r.records), fpi: Number(r.fpi), bytes: Number(r.bytes), syncs: Number(r.syncs), checkpoints: Number(r.checkpoints), t: Date.now() };
}

/** What the server wrote to its WAL between two walStats. */
function describeWal(a: Awaited<ReturnType<typeof walStats>>, b: Awaited<ReturnType<typeof walStats>>): string {
  const s = (b.t - a.t) / 1000;
  const bytes = b.bytes - a.bytes;
  return `WAL (the server's, pg_stat_wal): ${fmt(bytes / 1e6)} MB in ${fmt(s)} s (${fmt(bytes / 1e6 / s, 2)} MB/s), ${fmt(b.records - a.records)} records, ${fmt(b.fpi - a.fpi)} full-page images (at most ${fmt(((b.fpi - a.fpi) * 8192 * 100) / Math.max(1, bytes))} % of the bytes: 8 KB each, less a page's free space or compressed), ${fmt((b.syncs - a.syncs) / s)} syncs/s, ${b.checkpoints - a.checkpoints} checkpoints`;
}

async function databaseSizes(c: pg.Client, database: string) {
  const total = Number((await c.query<{ s: string }>('SELECT pg_database_size($1) AS s', [database])).rows[0]!.s);
  const db = new pg.Client({ connectionString: urlOf(database) });
  await db.connect();
  // Partitions count with their parent.
  const { rows } = await db.query<{ name: string; bytes: string }>(`
    SELECT coalesce(parent.relname, c.relname) AS name, sum(pg_total_relation_size(c.oid))::bigint AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class parent ON parent.oid = i.inhparent
    WHERE n.nspname = 'public' AND c.relkind = 'r' GROUP BY 1`);
  await db.end();
  return { total, tables: new Map(rows.map((r) => [r.name, Number(r.bytes)])) };
}

function urlOf(database: string): string {
  const u = new URL(DATABASE_URL);
  u.pathname = `/${database}`;
  return u.toString();
}

// ---- The load ----------------------------------------------------------------------------------

/** Vehicles that reported a position (service clock ms of the position), for coverage. */
const lastPositionAt = new Map<string, number>();
/** Trips in progress: started (trip_start accepted) and not ended, with the item times. */
const tripStarted = new Map<string, number>();
const tripEnded = new Map<string, number>();
/** Item id → when its batch was answered (real ms): the live stream's lag. */
const acceptedAtOfItem = new Map<string, number>();
/** Position reports not yet seen in vehicle-positions, per vehicle: [item time, accepted at]. */
const pendingPositions = new Map<string, [number, number][]>();

/** Every answered batch; only those of the measured run (after the simulator's catch-up) count in the figures. */
function onBatch(b: BatchSeen) {
  if (running) {
    F.batchMs.add(b.answeredAt - b.sentAt, b.answeredAt);
    F.batchSeenMs.add(b.seenAt - b.sentAt, b.answeredAt);
    F.items.add(b.accepted, b.answeredAt);
  }
  for (const it of b.items) {
    const at = Date.parse(it.at);
    if (running) acceptedAtOfItem.set(it.id, b.answeredAt);
    if (it.type === 'position') {
      lastPositionAt.set(b.vehicleId, Math.max(lastPositionAt.get(b.vehicleId) ?? 0, at));
      if (running) {
        const list = pendingPositions.get(b.vehicleId) ?? [];
        list.push([at, b.answeredAt]);
        pendingPositions.set(b.vehicleId, list);
      }
    } else if (it.type === 'trip_start' && it.trip_id) tripStarted.set(it.trip_id, at);
    else if (it.type === 'trip_end' && it.trip_id) tripEnded.set(it.trip_id, at);
    else if (it.type === 'trip_event' && (it.event === 'arrival' || it.event === 'departure') && it.trip_id && it.stop_sequence !== undefined) {
      sampleTripLag(it.trip_id, it.service_date!, it.stop_sequence, b.answeredAt);
    }
  }
}

/** At most this many trip objects followed at once (the probe must not become the load). */
const MAX_TRIP_PROBES = 4;
let tripProbes = 0;
function sampleTripLag(tripId: string, date: string, seq: number, acceptedAt: number) {
  if (tripProbes >= MAX_TRIP_PROBES || !running) return;
  tripProbes++;
  void (async () => {
    try {
      const deadline = acceptedAt + 60_000;
      while (Date.now() < deadline && running) {
        const t0 = Date.now();
        const trip = await api<{ delay?: { stop_sequence: number | null; actual_at: string | null }[] }>('GET', `/groups/${GROUP}/trips/${encodeURIComponent(tripId)}?date=${date}`);
        F.tripObjectMs.add(Date.now() - t0);
        if (trip.delay?.some((s) => s.stop_sequence === seq && s.actual_at !== null)) {
          F.lagTripObject.add(Date.now() - acceptedAt);
          return;
        }
        await sleep(500);
      }
      if (running) F.lagTripObjectMissed.add(1);
    } catch (err) {
      log(`trip probe: ${(err as Error).message}`);
    } finally {
      tripProbes--;
    }
  })();
}

/** The tables the service writes under the load (what autovacuum would analyse). */
const WRITTEN_TABLES = [
  'positions', 'trip_events', 'passenger_counts', 'trip_runs', 'trip_tracking', 'trip_tracking_stops', 'trip_tracking_dirty', 'prediction_sample_sets',
  'device_latest', 'device_sign_events', 'device_history_events', 'device_history_snapshots', 'duties', 'vehicle_movements',
];

/** What the bench does in the stead of a server's autovacuum that is off (--analyze). */
const ANALYZE_MODE = args.analyze === 'minute' ? 'minute' : args.analyze === 'autovacuum' ? 'autovacuum' : (() => {
  throw new Error(`--analyze ${args.analyze}: autovacuum or minute`);
})();

/**
 * One pass of what autovacuum would do, on a server where it is off (--analyze autovacuum, the
 * default): by its rules and with the server's own autovacuum settings, on the tables the
 * service writes. A table (each partition of a partitioned one: autovacuum never processes a
 * partitioned table itself) is analysed when the rows changed since its last analyse pass
 * autovacuum_analyze_threshold + autovacuum_analyze_scale_factor × its rows, and vacuumed when
 * its dead rows pass the vacuum threshold and scale factor, or the rows inserted since its last
 * vacuum the insert ones; both under autovacuum's cost-based delay. One worker does them in turn
 * (the daemon has up to autovacuum_max_workers). `minute` (the bench until 2026-12-02): every
 * written table analysed, partitioned ones whole, every minute, nothing vacuumed: 5.5–9.3 s a
 * minute on the city, against 2.0–2.3 s a pass at p50 by autovacuum's rules (5 analysed, 3
 * vacuumed; 10.6–11.8 s for the first ones).
 */
async function autovacuumPass(db: pg.Client, mode: 'autovacuum' | 'minute'): Promise<{ analysed: number; vacuumed: number }> {
  if (mode === 'minute') {
    const tables = (await db.query<{ t: string }>(`SELECT t FROM unnest($1::text[]) AS t WHERE to_regclass(t) IS NOT NULL`, [WRITTEN_TABLES])).rows.map((r) => r.t);
    await db.query(`ANALYZE ${tables.join(', ')}`);
    return { analysed: tables.length, vacuumed: 0 };
  }
  await db.query(`SELECT set_config('vacuum_cost_delay', current_setting('autovacuum_vacuum_cost_delay'), false),
    set_config('vacuum_cost_limit', CASE WHEN current_setting('autovacuum_vacuum_cost_limit') = '-1' THEN current_setting('vacuum_cost_limit') ELSE current_setting('autovacuum_vacuum_cost_limit') END, false)`);
  const { rows } = await db.query<{ t: string; analyse: boolean; vacuum: boolean }>(`
    WITH s AS (
      SELECT current_setting('autovacuum_analyze_threshold')::float8 AS a0, current_setting('autovacuum_analyze_scale_factor')::float8 AS af,
             current_setting('autovacuum_vacuum_threshold')::float8 AS v0, current_setting('autovacuum_vacuum_scale_factor')::float8 AS vf,
             current_setting('autovacuum_vacuum_insert_threshold')::float8 AS i0, current_setting('autovacuum_vacuum_insert_scale_factor')::float8 AS if_
    )
    SELECT format('%I', c.relname) AS t,
           st.n_mod_since_analyze > s.a0 + s.af * greatest(c.reltuples, 0) AS analyse,
           st.n_dead_tup > s.v0 + s.vf * greatest(c.reltuples, 0) OR (s.i0 >= 0 AND st.n_ins_since_vacuum > s.i0 + s.if_ * greatest(c.reltuples, 0)) AS vacuum
    FROM unnest($1::text[]) AS w(name)
    -- The table, or each partition of a partitioned one (the partitioned table itself is relkind 'p').
    CROSS JOIN LATERAL (SELECT relid FROM pg_partition_tree(to_regclass(w.name)) WHERE isleaf UNION SELECT to_regclass(w.name)) AS p(relid)
    JOIN pg_class c ON c.oid = p.relid AND c.relkind = 'r'
    JOIN pg_stat_user_tables st ON st.relid = p.relid
    CROSS JOIN s`, [WRITTEN_TABLES]);
  let analysed = 0;
  let vacuumed = 0;
  for (const r of rows) {
    if (!r.analyse && !r.vacuum) continue;
    await db.query(r.vacuum ? `VACUUM${r.analyse ? ' (ANALYZE)' : ''} ${r.t}` : `ANALYZE ${r.t}`);
    if (r.analyse) analysed++;
    if (r.vacuum) vacuumed++;
  }
  return { analysed, vacuumed };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let running = false;
const benchDelay = monitorEventLoopDelay({ resolution: 10 });
benchDelay.enable();
setInterval(() => {
  if (running) F.benchLoopMs.add(Math.round(benchDelay.max / 1e6));
  benchDelay.reset();
}, 1000).unref();

// ---- Passenger feed consumers -----------------------------------------------------------------

const FEEDS = {
  'vehicle-positions': '/gtfs-rt/vehicle-positions',
  'trip-updates': '/gtfs-rt/trip-updates',
  'siri-vm': '/siri/vehicle-monitoring',
  'siri-et': '/siri/estimated-timetable',
} as const;
/** What the consumers' thread answers (consumer-worker.mjs): the timing, the sizes and, when asked, what the feed holds. */
interface Consumed {
  status: number;
  /** Request to the last byte, ms; when that byte came, epoch ms. */
  ms: number;
  endedAt: number;
  /** Bytes on the wire (gzipped when the service gives it so) and inflated. */
  wireBytes: number;
  bodyBytes: number;
  /** A GTFS-Realtime feed's header timestamp (ms), its vehicles ([id, position time ms]) or its trips; a SIRI EstimatedTimetable's ResponseTimestamp. */
  header?: number;
  vehicles?: [string, number][];
  trips?: string[];
  /** Its ETag and Last-Modified (a peek: getAsConsumer's `peek`). */
  etag?: string;
  lastModified?: string;
  /** The start of an answer other than 200 or 204. */
  text?: string;
}

/** The consumers' thread (consumer-worker.mjs): the timed GETs and their decoding, away from the simulator's event loop. */
const consumers = askingThread<{ url: string; headers: Record<string, string>; digest: string | undefined; peek?: boolean }, Consumed>(new URL('./consumer-worker.mjs', import.meta.url));

/**
 * A GET as a feed consumer or a console makes it (Accept-Encoding: gzip, a kept-alive connection),
 * timed on the consumers' thread: the time until the last byte arrived. Inflating and decoding
 * (`digest`: a GTFS-Realtime feed's vehicles or trips) are the consumer's own work, done after,
 * on that thread too.
 */
function getAsConsumer(path: string, headers: Record<string, string> = {}, digest?: 'vehicle-positions' | 'trip-updates' | 'siri-et', peek = false): Promise<Consumed> {
  return consumers.ask({ url: `${baseUrl}/api/v4${path}`, headers: { 'accept-encoding': 'gzip', ...headers }, digest, peek });
}

/**
 * How often each feed's headers are peeked at: 250 ms (a second until 2026-12-06: a publication
 * was then counted up to a second older than it was, at the p99 of the sawtooth most of all).
 */
const PEEK_MS = 250;

/**
 * The age of the feed served at any instant, whoever asks and whenever (the consumer above sees
 * one phase of the rebuilds: polling every 5 s against rebuilds every 5.1 s, its poll falls at
 * nearly the same point after each for minutes). Each feed's headers are peeked at every PEEK_MS
 * (If-None-Match: a 304 while it is the same; the body of a new one not read): a new ETag is a
 * new publication, seen within about PEEK_MS of it, its header time its Last-Modified (to the
 * second, as the feeds' own headers). Between two publications seen, the feed served is the
 * first, its age sampled every 100 ms: its sawtooth over the run, of which p50 / p99 are what a
 * consumer polling at random instants gets (a publication seen up to PEEK_MS late counts the
 * one before it meanwhile: older, never fresher). A publication whose content did not
 * change keeps its ETag and is not seen: the age counted goes on from the one before (older).
 */
const published = new Map<keyof typeof FEEDS, { etag: string; seenAt: number; header: number }>();
async function peekFeed(name: keyof typeof FEEDS, now: () => number): Promise<void> {
  const last = published.get(name);
  const res = await getAsConsumer(`/groups/${GROUP}${FEEDS[name]}`, last ? { 'if-none-match': last.etag } : {}, undefined, true);
  if (res.status === 304 || res.status === 204) return;
  if (res.status !== 200 || !res.etag || !res.lastModified) throw new Error(`${name} peeked: ${res.status}`);
  const seenAt = now() - (Date.now() - res.endedAt);
  const header = Date.parse(res.lastModified);
  const series = F.servedAge.get(name) ?? F.servedAge.set(name, new Series()).get(name)!;
  // The one before was served from when it was seen until now: its age every 100 ms, at the real time of each instant.
  if (last) for (let t = last.seenAt; t < seenAt; t += 100) series.add((t - last.header) / 1000, Date.now() - (seenAt - t));
  published.set(name, { etag: res.etag, seenAt, header });
}

/** The feeds the consumer polls (--feeds). */
const POLLED = (args.feeds ?? '').split(',').map((f) => f.trim()).filter((f) => f !== '') as (keyof typeof FEEDS)[];
for (const f of POLLED) if (!(f in FEEDS)) throw new Error(`--feeds: ${f} is none of ${Object.keys(FEEDS).join(', ')}`);

/**
 * When an answer's last byte came, on the run's clock: decoding it (a city's trip-updates is 10 MB
 * of protobuf) and this thread's turn are the consumer's own time, not the feed's age (counted
 * apart in F.consumerMs).
 */
function arrivedAt(res: Consumed, now: () => number): number {
  const consumer = Date.now() - res.endedAt;
  F.consumerMs.add(consumer);
  return now() - consumer;
}

async function fetchFeed(name: keyof typeof FEEDS, now: () => number): Promise<void> {
  const res = await getAsConsumer(`/groups/${GROUP}${FEEDS[name]}`, {}, name === 'vehicle-positions' || name === 'trip-updates' || name === 'siri-et' ? name : undefined);
  if (res.status !== 200 && res.status !== 204) throw new Error(`${name}: ${res.status} ${res.text ?? ''}`);
  (F.feedMs.get(name) ?? F.feedMs.set(name, new Series()).get(name)!).add(Math.round(res.ms));
  (F.feedBytes.get(name) ?? F.feedBytes.set(name, new Series()).get(name)!).add(res.bodyBytes);
  (F.feedWireBytes.get(name) ?? F.feedWireBytes.set(name, new Series()).get(name)!).add(res.wireBytes);
  if (res.header === undefined) return;
  const header = res.header;
  const fetchedAt = arrivedAt(res, now);
  if (name === 'siri-et') F.timetableHeaderAge.add((fetchedAt - header) / 1000);
  else if (res.vehicles) {
    F.headerAge.add((fetchedAt - header) / 1000);
    const present = new Set<string>();
    for (const [id, at] of res.vehicles) {
      present.add(id);
      F.positionAge.add((fetchedAt - at) / 1000);
    }
    let reporting = 0;
    let seen = 0;
    for (const [v, at] of lastPositionAt) if (at <= header && at > header - STALE_S * 1000) {
      reporting++;
      if (present.has(v)) seen++;
    }
    if (reporting > 0) F.coverageVehicles.add((100 * seen) / reporting);
  } else if (res.trips) {
    F.tripsHeaderAge.add((fetchedAt - header) / 1000);
    if (!tripSnapshotsSeen.has(header)) {
      tripSnapshotsSeen.add(header);
      if (tripSnapshotsSeen.size > 1) F.tripsBuildUpperBound.add((fetchedAt - header) / 1000);
    }
    const inFeed = new Set(res.trips);
    let progress = 0;
    let seen = 0;
    for (const [trip, started] of tripStarted) {
      const ended = tripEnded.get(trip);
      if (started <= header && (ended === undefined || ended > header)) {
        progress++;
        if (inFeed.has(trip)) seen++;
      }
    }
    if (progress > 0) F.coverageTrips.add((100 * seen) / progress);
    if (progress > 0 && caughtUpAt === undefined && seen >= 0.99 * progress) caughtUpAt = Date.now();
  }
}

/**
 * When trip-updates first held 99 % of the trips in progress (Date.now()): the service's catch-up of
 * each vehicle's morning so far is over by then. A steady window that starts before it measures a
 * network whose feeds are not yet whole (smaller, so cheaper, trip-updates): said with the figures.
 */
let caughtUpAt: number | undefined;

/** The first time each snapshot (header timestamp) is seen, its age: an upper bound of its build time plus the wait for a request. */
const snapshotsSeen = new Set<number>();
const tripSnapshotsSeen = new Set<number>();

/**
 * Reads the trip object of a trip in progress (started, not ended), picked at random, once a
 * second (--trip-reads: that many times a second), as a console or a passenger app would: the trip object's latency apart from the
 * recomputation a read right after a report waits for (the tracking lag probe's). Timed on the
 * consumers' thread, like the feeds.
 */
let tripReads = 0;
async function readTripObject(date: string): Promise<void> {
  const inProgress = [...tripStarted.keys()].filter((t) => !tripEnded.has(t));
  if (inProgress.length === 0) return;
  const trip = inProgress[(tripReads++ * 7919) % inProgress.length]!;
  const res = await getAsConsumer(`/groups/${GROUP}/trips/${encodeURIComponent(trip)}?date=${date}`, { authorization: `Bearer ${token}` });
  if (res.status !== 200) throw new Error(`trip object ${trip}: ${res.status}`);
  F.tripReadMs.add(Math.round(res.ms));
}

/** Polls vehicle-positions every second (on the consumers' thread): when each accepted position becomes visible. */
async function probeFeedLag(now: () => number): Promise<void> {
  const res = await getAsConsumer(`/groups/${GROUP}${FEEDS['vehicle-positions']}`, {}, 'vehicle-positions');
  if (res.header === undefined || !res.vehicles) throw new Error(`vehicle-positions: ${res.status} ${res.text ?? ''}`);
  const seenAt = res.endedAt;
  const header = res.header;
  if (!snapshotsSeen.has(header)) {
    snapshotsSeen.add(header);
    if (snapshotsSeen.size > 1) F.buildUpperBound.add((arrivedAt(res, now) - header) / 1000);
  }
  for (const [v, ts] of res.vehicles) {
    const list = pendingPositions.get(v);
    if (!list) continue;
    let k = 0;
    while (k < list.length && list[k]![0] <= ts) F.lagFeed.add(seenAt - list[k++]![1], seenAt);
    if (k > 0) list.splice(0, k);
  }
}

function loop(name: string, everyMs: number, offsetMs: number, fn: () => Promise<void>): Promise<void> {
  return (async () => {
    await sleep(offsetMs);
    while (running) {
      const t0 = Date.now();
      try {
        await fn();
      } catch (err) {
        log(`${name}: ${(err as Error).message}`);
      }
      await sleep(Math.max(0, everyMs - (Date.now() - t0)));
    }
  })();
}

function subscribeLive(): WebSocket {
  const ws = new WebSocket(`${baseUrl.replace('http', 'ws')}/api/v4/groups/${GROUP}/events/op/subscribe`, { headers: { authorization: `Bearer ${token}` } });
  ws.on('message', (data) => {
    const at = Date.now();
    const parsed = JSON.parse(data.toString()) as unknown;
    for (const env of Array.isArray(parsed) ? parsed : [parsed]) {
      const id = (env as { data?: { id?: string } }).data?.id;
      const accepted = id ? acceptedAtOfItem.get(id) : undefined;
      if (accepted !== undefined) {
        F.liveLag.add(Math.max(0, at - accepted), at);
        acceptedAtOfItem.delete(id!);
      }
    }
  });
  ws.on('error', (err) => log(`live stream: ${err.message}`));
  return ws;
}

// ---- The feed and the clock -------------------------------------------------------------------

interface FeedFile {
  path: string;
  timezone: string;
  describe: string;
  /** The first and last service dates of the feed (YYYYMMDD). */
  from: string;
  to: string;
}

async function feedFile(): Promise<FeedFile> {
  if (FEED === 'demo') {
    const n = generateNetwork();
    const today = DateTime.now().setZone(n.timezone);
    const from = today.minus({ days: 7 }).toISODate()!;
    const to = today.plus({ days: 60 }).toISODate()!;
    const path = join(tmpdir(), `netbench-demo-${process.pid}.zip`);
    await writeFile(path, demoFeedZip(n, from, to));
    return { path, timezone: n.timezone, describe: `demo network (seed ${n.seed})`, from: from.replaceAll('-', ''), to: to.replaceAll('-', '') };
  }
  const f = await mtaFeedZip(FEED as MtaFeed, { log });
  return { path: f.path, timezone: 'America/New_York', describe: describeFigures(f), from: '', to: '' };
}

/** The service date of the run: --date, else today if a weekday, else the next weekday (feed's time zone). */
function serviceDate(tz: string): string {
  if (args.date) return args.date;
  let d = DateTime.now().setZone(tz).startOf('day');
  while (d.weekday > 5) d = d.plus({ days: 1 });
  return d.toISODate()!;
}

/**
 * Sets every thread of this process to nice `n` (Linux: a thread's own priority, its id from
 * /proc/self/task), the threads it starts afterwards inheriting it; returns how many. The service,
 * a child started before, keeps its own. A raise of nice needs no privilege.
 */
function loadNice(n: number): number {
  let set = 0;
  for (const id of readdirSync('/proc/self/task')) {
    try {
      setPriority(Number(id), n);
      set++;
    } catch {
      // Ended meanwhile.
    }
  }
  return set;
}

// ---- Main ---------------------------------------------------------------------------------------

async function main() {
  const started = Date.now();
  const speedBefore = machineSpeed();
  log(describeSpeed(speedBefore));
  const feed = await feedFile();
  log(feed.describe);
  const date = serviceDate(feed.timezone);
  const [hh, mm] = args.at!.split(':').map(Number) as [number, number];
  const peak = DateTime.fromISO(date, { zone: feed.timezone }).set({ hour: hh, minute: mm });
  log(`service date ${date}, the run starts at ${peak.toISO()} (${feed.timezone}); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

  const database = `netbench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  // Interrupted: the service stopped and the database dropped all the same.
  const interrupted = () => void (async () => {
    running = false;
    await stopServer();
    if (!args.keep) await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    process.exit(130);
  })();
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  let ws: WebSocket | null = null;
  try {
    // The service's sessions take them (ALTER DATABASE … SET): the server's other databases are untouched.
    for (const [name, value] of DATABASE_SETTINGS) await admin.query(`ALTER DATABASE ${database} SET ${name} = '${value}'`);
    // Setup on a clock an hour before the peak (the publication dates from the service date).
    await startServer(urlOf(database), peak.toMillis() - 3600_000 - Date.now());
    await login();
    await api('POST', '/groups', { group_id: GROUP, name: `bench:network ${FEED}`, timezone: feed.timezone });
    const zip = await readFile(feed.path);
    const t0 = Date.now();
    const imported = await api<{ gtfs_id: string; counts?: Record<string, number> }>('POST', `/groups/${GROUP}/gtfs?name=${FEED}`, zip);
    const importS = (Date.now() - t0) / 1000;
    log(`import: ${importS.toFixed(1)} s (${(zip.length / 1024 / 1024).toFixed(1)} MB zip) ${JSON.stringify(imported.counts ?? {})}`);
    const t1 = Date.now();
    await api('POST', `/groups/${GROUP}/gtfs/${imported.gtfs_id}/publish`);
    log(`publish: ${((Date.now() - t1) / 1000).toFixed(1)} s`);

    const simulator = await loadSimulator();
    const provisionStart = Date.now();
    // Provisioning (vehicles, drivers, devices, keys) on the setup clock; then the service restarts on the run's clock.
    await simulator.prepare({ baseUrl, groupId: GROUP, admin: ADMIN, date, peak: peak.toMillis(), minutes: MINUTES, periodS: PERIOD_S, maxVehicles: MAX_VEHICLES, databaseUrl: urlOf(database), log });
    log(`simulator prepared in ${((Date.now() - provisionStart) / 1000).toFixed(1)} s: ${simulator.vehicles} vehicles`);
    const sizeImported = await databaseSizes(admin, database);

    await stopServer();
    const offset = peak.toMillis() - Date.now();
    const now = () => Date.now() + offset;
    await startServer(urlOf(database), offset, true);
    if (LOAD_NICE > 0) log(`the load generator at nice ${LOAD_NICE}: ${loadNice(LOAD_NICE)} of its threads`);
    await login();
    simulator.setBaseUrl(baseUrl);
    if (simulator.start) {
      const t2 = Date.now();
      await simulator.start(now, onBatch);
      log(`simulator started (provisioning, each vehicle's morning so far) in ${((Date.now() - t2) / 1000).toFixed(1)} s; the measured run starts at ${new Date(now()).toISOString()}`);
    }
    if (HISTORY_DAYS > 0) {
      const t4 = Date.now();
      const written = await loadHistory(urlOf(database), GROUP, date, HISTORY_DAYS, log);
      log(`history: ${HISTORY_DAYS} days before ${date} in ${((Date.now() - t4) / 1000).toFixed(1)} s: ${Object.entries(written).map(([t, n]) => `${t} ${fmt(n)}`).join(', ')}`);
    }
    // What the start wrote (the day so far, and the history's gigabytes) is vacuumed and flushed
    // before the measure, with or without history: a database that grew over weeks has long been
    // vacuumed (each day's rows as autovacuum found them) and checkpointed, and the minutes
    // measured must not share the machine with a first vacuum of the bulk load. (Without it, the
    // bench's first pass in autovacuum's stead after the measure began vacuumed 72 days of copies
    // for 170 s, 2026-12-04 20:57–21:00: the trip object's tail and the late positions of the
    // history runs until then were taken during it.)
    const t6 = Date.now();
    const vacuumer = new pg.Client({ connectionString: urlOf(database) });
    await vacuumer.connect();
    try {
      await vacuumer.query('VACUUM (ANALYZE)');
    } finally {
      await vacuumer.end();
    }
    log(`vacuum (analyze) after the start: ${((Date.now() - t6) / 1000).toFixed(1)} s`);
    const t5 = Date.now();
    await admin.query('CHECKPOINT');
    log(`checkpoint after the start: ${((Date.now() - t5) / 1000).toFixed(1)} s`);

    // The first request of a feed waits for the group's first snapshot: made before the measure.
    const t3 = Date.now();
    for (const name of POLLED) await fetch(`${baseUrl}/api/v4/groups/${GROUP}${FEEDS[name]}`, { signal: AbortSignal.timeout(900_000) }).then((r) => r.arrayBuffer());
    log(`first snapshot of the feeds: ${((Date.now() - t3) / 1000).toFixed(1)} s`);
    // PostgreSQL's autovacuum keeps the statistics of the tables being written; a server with it
    // off (this machine's is) plans the report tables as if empty. The bench does its work instead,
    // now and every minute (its default naptime), and says so (autovacuumPass).
    const autovacuum = (await admin.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]!.autovacuum;
    const analyzer = autovacuum === 'on' ? null : new pg.Client({ connectionString: urlOf(database) });
    const analyze = async () => {
      if (!analyzer) return;
      const t = Date.now();
      const done = await autovacuumPass(analyzer, ANALYZE_MODE);
      F.analyzeMs.add(Date.now() - t);
      F.analyzedTables.add(done.analysed);
      F.vacuumedTables.add(done.vacuumed);
    };
    if (analyzer) {
      await analyzer.connect();
      log(`PostgreSQL autovacuum is off on this server: ${ANALYZE_MODE === 'minute' ? 'the bench analyses the tables the service writes every minute (--analyze minute)' : "the bench does autovacuum's work on the tables the service writes every minute, by its rules (--analyze autovacuum)"}`);
      await analyze();
    }
    const sizeBefore = await databaseSizes(admin, database);
    const walBefore = await walStats(admin);
    const cpu = new CpuMeter(admin, database);
    const profile = new QueryProfile(admin, database);
    /** The CPU figures and the feeds' rebuild parts (the service's /metrics) at one instant. */
    const sampled = async () => ({ ...(await cpu.sample()), ...(await serviceMetrics(baseUrl)), t: Date.now() });
    let last = await sampled();
    const runStart = Date.now();
    running = true;
    ws = subscribeLive();
    const loops = [
      ...(args['no-feeds'] ? [] : [
        ...POLLED.map((name, i) => loop(name, 5000, 1250 * i, () => fetchFeed(name, now))),
        loop('feed lag probe', 1000, 500, () => probeFeedLag(now)),
        ...POLLED.filter((name) => name === 'trip-updates' || name === 'siri-et').map((name, i) => loop(`${name} peek`, PEEK_MS, 60 + 120 * i, () => peekFeed(name, now))),
      ]),
      loop('trip object reader', 1000 / TRIP_READS, 250, () => readTripObject(date)),
      loop('query profile', 1000, 0, () => profile.sample()),
      ...(analyzer ? [loop('analyze', 60_000, 60_000, analyze)] : []),
    ];
    const simDone = simulator.run(now, onBatch, () => running);

    const windows: string[] = [];
    /**
     * The figures from `since` to `end` (default: now, sampled now): the whole run's and the
     * steady state's end where the measured run ended, not after the simulator's last answers,
     * the loops and the analyser came to an end (seconds of no load, which counted in the rates).
     */
    const report = async (since: number, label: string, end?: typeof last) => {
      const c = end ?? (await sampled());
      const seconds = (c.t - last.t) / 1000;
      const line = [
        `${label}: ${fmt(F.items.sum(since) / ((c.t - since) / 1000), 1)} items/s, batch p50/p99 ${F.batchMs.describe(since)} (${F.batchSeenMs.describe(since)} as the load generator's thread had the answers), failed batches ${simulator.failures}`,
        `  tracking lag (accepted → trip object) p50/p99 ${F.lagTripObject.describe(since)}, not seen within 60 s ${F.lagTripObjectMissed.count(since)}; trip object read right after a report (recomputes the trip first) ${F.tripObjectMs.describe(since)}`,
        `  trip object of a trip in progress, read ${TRIP_READS} a second ${F.tripReadMs.describe(since)}`,
        `  feed lag (accepted → vehicle-positions, polled every 1 s) ${F.lagFeed.describe(since)}; live stream lag ${F.liveLag.describe(since)}`,
        ...POLLED.map((n) => `  ${n.padEnd(18)} fetch p50/p99 ${F.feedMs.get(n)?.describe(since) ?? '—'}, ${fmt((F.feedBytes.get(n)?.values(since).at(-1) ?? 0) / 1024)} KB (${fmt((F.feedWireBytes.get(n)?.values(since).at(-1) ?? 0) / 1024)} KB on the wire)`),
        `  freshness: header age vehicle-positions ${F.headerAge.describe(since, 's', 1)}, trip-updates ${F.tripsHeaderAge.describe(since, 's', 1)}, siri-et ${F.timetableHeaderAge.describe(since, 's', 1)}; position age ${F.positionAge.describe(since, 's', 1)} (ages at the last byte; the consumer's decoding after it ${F.consumerMs.describe(since, 'ms')}); new snapshot first seen at age: vehicle-positions (polled every 1 s) ${F.buildUpperBound.describe(since, 's', 1)}, trip-updates (every 5 s) ${F.tripsBuildUpperBound.describe(since, 's', 1)}`,
        `  served age at any instant (each feed's headers peeked every ${PEEK_MS} ms; what a consumer polling at random instants gets): ${[...F.servedAge].map(([name, v]) => `${name} ${v.describe(since, 's', 1)}`).join(', ') || '—'}`,
        `  coverage: vehicles ${F.coverageVehicles.describe(since, '%', 1)}; trips ${F.coverageTrips.describe(since, '%', 1)}`,
        `  server event loop held (longest delay of each second) p50/p99 ${F.eventLoopMs.describe(since)}; the bench's own (load generator and consumers: its holds delay what it measures) ${F.benchLoopMs.describe(since)}`,
        ...(F.analyzeMs.count() > 0 ? [`  the bench's passes in autovacuum's stead (autovacuum off; --analyze ${ANALYZE_MODE}) ${F.analyzeMs.describe()}, tables analysed ${F.analyzedTables.describe(0, '')}, vacuumed ${F.vacuumedTables.describe(0, '')} per pass`] : []),
        `  garbage collector, each second: longest pause ${F.gcPauseMs.describe(since)}; pauses in all ${F.gcTotalMs.describe(since)}; longest major pause ${F.gcMajorMs.describe(since)}`,
        `  feed rebuilds (the service's /metrics): ${describeRebuilds(last.rebuilds, c.rebuilds)}`,
        `  the service's threads (its /metrics), % of a core on a CPU / waiting for one: ${describeThreads(last.threads, c.threads, seconds)}`,
        `  CPU: server ${fmt((100 * (c.serverS - last.serverS)) / seconds)} %, PostgreSQL backends ${fmt((100 * (c.postgresS - last.postgresS)) / seconds)} %, load generator ${fmt((100 * (c.benchS - last.benchS)) / seconds)} %; server RSS ${fmt(child?.pid ? rssMb(child.pid) : NaN)} MB; load average ${loadavg()[0]!.toFixed(1)}`,
      ].join('\n');
      last = c;
      return line;
    };
    const totalsStart = await sampled();
    last = totalsStart;
    let windowStart = Date.now();
    /** Where the steady state starts: the first window's end at least --steady-after seconds into the run. */
    let steadyStart: typeof last | null = null;
    while (Date.now() - runStart < MINUTES * 60_000) {
      await sleep(Math.min(30_000, MINUTES * 60_000 - (Date.now() - runStart)));
      const line = await report(windowStart, `${fmt((Date.now() - runStart) / 1000)} s (${simulator.activeVehicles()} vehicles sending)`);
      windows.push(line);
      console.log(line);
      windowStart = Date.now();
      if (!steadyStart && STEADY_AFTER_S > 0 && Date.now() - runStart >= STEADY_AFTER_S * 1000 && Date.now() - runStart < MINUTES * 60_000) steadyStart = { ...last };
    }
    const runEnd = await sampled();
    running = false;
    await simDone;
    await Promise.all(loops);
    ws.close();
    await analyzer?.end();
    last = totalsStart;
    const sizeAfter = await databaseSizes(admin, database);
    const walAfter = await walStats(admin);
    const final = await report(runStart, `whole run, ${MINUTES} min`, runEnd);
    let steady = '';
    if (steadyStart) {
      last = steadyStart;
      const caughtUp = caughtUpAt === undefined ? 'never in the run' : `at ${fmt((caughtUpAt - runStart) / 1000)} s`;
      const warning = caughtUpAt === undefined || caughtUpAt > steadyStart.t ? '; NOT STEADY: the window starts before the catch-up ended, give a longer --steady-after' : '';
      steady = await report(steadyStart.t, `steady state, the run after its first ${fmt((steadyStart.t - runStart) / 1000)} s (the service's catch-up of each vehicle's morning left out; trip-updates first held 99 % of the trips in progress ${caughtUp}${warning})`, runEnd);
    }
    // The warehouse's export of the day (export/trip-tracking, one line per recorded trip and stop), after the run, three
    // times: the first also recomputes the trips still marked when the run stopped (an export holds every report committed).
    const exports: { rows: number; s: number }[] = [];
    for (let k = 0; k < 3; k++) {
      const t5 = Date.now();
      const exported = await fetch(`${baseUrl}/api/v4/groups/${GROUP}/export/trip-tracking?start_date=${date}&end_date=${date}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(600_000) }).then((r) => r.text());
      exports.push({ s: (Date.now() - t5) / 1000, rows: exported.split('\n').filter((l) => l !== '').length - 1 });
    }
    console.log('\n==== bench:network', FEED, new Date().toISOString(), '====');
    console.log(`feed: ${feed.describe.split('\n')[0]}`);
    console.log(`import ${importS.toFixed(1)} s; service date ${date} from ${args.at} local; ${simulator.vehicles} vehicles (one per block running), period ${PERIOD_S} s; simulator: ${simulator.name}`);
    // The service takes its settings from this environment (startServer): those given are part of what was measured.
    console.log(`${describeSpeed(speedBefore)}, before the run`);
    const given = Object.entries(process.env).filter(([k]) => /^(FEEDS|PREDICTIONS?|POSITIONS|PARTITIONS|DATABASE_POOL)_/.test(k));
    if (given.length > 0) console.log(`service settings given: ${given.map(([k, v]) => `${k}=${v}`).join(' ')}`);
    console.log(final);
    if (steady) console.log(steady);
    console.log(`  export/trip-tracking of ${date}, three times: ${exports.map((e) => `${fmt(e.rows)} rows in ${e.s.toFixed(2)} s (${fmt(e.rows / e.s)} rows/s)`).join(', ')}; the first recomputes the trips still marked${HISTORY_DAYS > 0 ? ` (with ${HISTORY_DAYS} days of history before it)` : ''}`);
    const grown = sizeAfter.total - sizeBefore.total;
    console.log(`database: ${fmt(sizeImported.total / 1024 / 1024)} MB with the feed imported, ${fmt(sizeBefore.total / 1024 / 1024)} MB at the start of the measured run, ${fmt(sizeAfter.total / 1024 / 1024)} MB after (+${fmt(grown / 1024 / 1024, 1)} MB in ${MINUTES} min: ${fmt(grown / 1024 / (simulator.vehicles * MINUTES / 60), 0)} KB per vehicle-hour)`);
    const tables = [...sizeAfter.tables].map(([n, b]) => [n, b - (sizeBefore.tables.get(n) ?? 0)] as const).filter(([, d]) => d > 256 * 1024).sort((a, b) => b[1] - a[1]);
    console.log(`  grown: ${tables.map(([n, d]) => `${n} +${fmt(d / 1024 / 1024, 1)} MB`).join(', ')}`);
    console.log(describeWal(walBefore, walAfter));
    console.log(`PostgreSQL's active statements (sampled every second over the run):\n  ${profile.top(8).join('\n  ')}`);
    console.log(`total bench time ${fmt((Date.now() - started) / 1000)} s`);
  } finally {
    running = false;
    ws?.close();
    // The consumers' thread keeps the process alive, unref'd or not (its kept-alive sockets).
    await consumers.close();
    await stopServer();
    if (args.keep) log(`database kept: ${urlOf(database)}`);
    else await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    if (FEED === 'demo') await rm(feed.path, { force: true });
  }
}

// ---- The simulator -------------------------------------------------------------------------------

/** --load sim: the network simulator (src/domains/simulate); replay: bench/network-replay.ts (the timetable exactly, no backlog at start). */
async function loadSimulator(): Promise<LoadSource> {
  if (args.load === 'replay') return new (await import('./network-replay.js')).ScheduleReplay();
  if (args.load !== 'sim') throw new Error('--load: sim or replay');
  return new (await import('./network-sim.js')).SimulatorLoad();
}

await main().catch(async (err: unknown) => {
  console.error(err);
  await stopServer();
  process.exitCode = 1;
});
