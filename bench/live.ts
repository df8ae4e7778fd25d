/**
 * npm run bench:live: 2,000 WebSocket clients on one instance receive the positions of 1,000
 * vehicles, each reporting every 5 s through the real device API (one position per request).
 * The load runs in child processes (the clients, and the vehicles), so the server keeps its event
 * loop and its CPU figure is its own. Prints delivery latency (from the position's `at`, set by
 * the vehicle just before its request, to the client's receipt) p50/p99 and the server's CPU.
 * Target: p99 under 250 ms.
 *
 * Options (env): CLIENTS (2000), VEHICLES (1000), PERIOD_S (5), SECONDS (30, measured after one
 * warm-up period), CLIENT_PROCS (2), ENGINE (postgres | pglite; default postgres), DATABASE_URL,
 * LIVE_BATCH_MS (the service's default).
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { createApiKey, hostPrincipal, wholeGroup } from '../src/domains/auth/service.js';
import { createGroup } from '../src/domains/groups/service.js';
import { benchDatabase, fmt, peakMemory } from './support.js';

const CLIENTS = Number(process.env['CLIENTS'] ?? 2000);
const VEHICLES = Number(process.env['VEHICLES'] ?? 1000);
const PERIOD_S = Number(process.env['PERIOD_S'] ?? 5);
const SECONDS = Number(process.env['SECONDS'] ?? 30);
const CLIENT_PROCS = Number(process.env['CLIENT_PROCS'] ?? 2);
const ENGINE = (process.env['ENGINE'] ?? 'postgres') as 'postgres' | 'pglite';
const BATCH_MS = process.env['LIVE_BATCH_MS'] ? Number(process.env['LIVE_BATCH_MS']) : undefined;

type Reply =
  | { kind: 'ready' }
  | { kind: 'done'; histogram: number[]; received: number; frames: number; closed: number; cpuMs: number }
  | { kind: 'cpu'; cpuMs: number }
  | { kind: 'sent'; requests: number; errors: number; p50: number; p99: number };

/** CPU time (ms) of every process (Linux /proc; ticks of 10 ms), by pid, with its name. */
function processCpuMs(): Map<string, { name: string; ms: number }> {
  const out = new Map<string, { name: string; ms: number }>();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(pid, { name, ms: (Number(f[11]) + Number(f[12])) * 10 });
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

const commandOf = (pid: string) => {
  try {
    return ` ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(1).join(' ').slice(0, 60)}`;
  } catch {
    return '';
  }
};

/** CPU used between two snapshots: PostgreSQL's processes, and the busiest processes outside the bench. */
function cpuBetween(before: Map<string, { name: string; ms: number }>, after: Map<string, { name: string; ms: number }>, bench: Set<number>) {
  let postgres = 0;
  const others: { name: string; ms: number }[] = [];
  for (const [pid, p] of after) {
    const ms = p.ms - (before.get(pid)?.ms ?? 0);
    if (p.name === 'postgres') postgres += ms;
    else if (!bench.has(Number(pid)) && ms > 0) others.push({ name: `${p.name}[${pid}${commandOf(pid)}]`, ms });
  }
  return { postgres, others: others.sort((a, b) => b.ms - a.ms).slice(0, 4) };
}

/** The machine's busy, stolen (by the hypervisor) and total CPU time (ms, all cores) from /proc/stat. */
function machineCpuMs(): { busy: number; softirq: number; steal: number; total: number } {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number) as number[];
  return { busy: (user! + nice! + system! + irq! + softirq!) * 10, softirq: softirq! * 10, steal: steal! * 10, total: (user! + nice! + system! + idle! + iowait! + irq! + softirq! + steal!) * 10 };
}

function child(role: 'clients' | 'vehicles', args: Record<string, unknown>) {
  const p = fork(new URL('./live-load.mjs', import.meta.url), [], { env: { ...process.env, ROLE: role, ARGS: JSON.stringify(args) } });
  const replies: Reply[] = [];
  const waiters: (() => void)[] = [];
  p.on('message', (m: Reply) => {
    replies.push(m);
    for (const w of waiters.splice(0)) w();
  });
  return {
    p,
    async next(kind: Reply['kind']) {
      for (;;) {
        const i = replies.findIndex((r) => r.kind === kind);
        if (i >= 0) return replies.splice(i, 1)[0]!;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

/** f(0) … f(n - 1), ten at a time (the setup), results in order. */
async function inParallel<T>(n: number, f: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await f(i);
    }
  }));
  return out;
}

async function main() {
  const { db, drop } = await benchDatabase(ENGINE);
  const defaults = testConfig();
  const config = testConfig({ logLevel: 'silent', databasePoolSize: 20, live: { ...defaults.live, batchMs: BATCH_MS ?? defaults.live.batchMs } });
  const app = await buildApp({ config, db, logger: false });
  try {
    const ctx = app.ctx;
    await createGroup(ctx, { group_id: 'bench', name: 'Bench network', timezone: 'Europe/Paris' });
    console.log(`setting up ${VEHICLES} vehicles with a signed-on device each, on ${ENGINE}…`);
    await db.query("INSERT INTO drivers (group_id, driver_id, driver_name, staff_number) SELECT 'bench', lpad(to_hex(i), 24, '0'), 'Driver ' || i, 'S' || i FROM generate_series(1, $1) i", [VEHICLES]);
    await db.query("INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate) SELECT 'bench', 'V' || i, 'F' || i, 'P' || i FROM generate_series(1, $1) i", [VEHICLES]);
    await db.query("INSERT INTO devices (group_id, device_id) SELECT 'bench', 'D' || i FROM generate_series(1, $1) i", [VEHICLES]);
    const keys = await inParallel(VEHICLES, async (i) => (await createApiKey(ctx, hostPrincipal, wholeGroup('bench'), { device_id: `D${i + 1}` })).value);
    const reader = (await createApiKey(ctx, hostPrincipal, wholeGroup('bench'), { role: 'reader', group_ids: ['bench'] })).value;
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const reportsUrl = `http://${base}/api/v4/groups/bench/device/reports`;
    await inParallel(VEHICLES, async (i0) => {
      const i = i0 + 1;
      const signOn = { id: randomUUID(), type: 'sign_on', at: new Date(Date.now() - 3600_000).toISOString(), driver_id: i.toString(16).padStart(24, '0'), vehicle_id: `V${i}` };
      const r = await fetch(reportsUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': keys[i0]! }, body: JSON.stringify({ items: [signOn] }) });
      if (r.status !== 200) throw new Error(`sign-on failed: ${r.status} ${await r.text()}`);
    });

    console.log(`connecting ${CLIENTS} WebSocket clients from ${CLIENT_PROCS} processes…`);
    const per = Math.ceil(CLIENTS / CLIENT_PROCS);
    const clientProcs = Array.from({ length: CLIENT_PROCS }, (_, i) =>
      child('clients', { url: `ws://${base}/api/v4/groups/bench/events/op/subscribe`, key: reader, groupId: 'bench', count: Math.min(per, CLIENTS - i * per) }),
    );
    for (const c of clientProcs) await c.next('ready');
    const hub = ctx.services.live;
    console.log(`subscribed: ${hub.stats.clients}; ${VEHICLES} vehicles report every ${PERIOD_S} s (warm-up ${PERIOD_S} s, then ${SECONDS} s measured)…`);

    const vehicles = child('vehicles', { url: reportsUrl, keys, periodS: PERIOD_S, seconds: SECONDS + PERIOD_S + 2 });
    await new Promise((r) => setTimeout(r, PERIOD_S * 1000));
    for (const c of [...clientProcs, vehicles]) c.p.send('reset');
    const memory = peakMemory();
    const processes0 = processCpuMs();
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const machine0 = machineCpuMs();
    const delivered0 = hub.stats.delivered;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const cpu = process.cpuUsage(cpu0);
    const elapsed = (performance.now() - t0) / 1000;
    const { postgres: pgMs, others } = cpuBetween(processes0, processCpuMs(), new Set([process.pid, ...[...clientProcs, vehicles].map((c) => c.p.pid!)]));
    const machine1 = machineCpuMs();
    loopDelay.disable();
    const delivered = hub.stats.delivered - delivered0;
    for (const c of [...clientProcs, vehicles]) c.p.send('report');
    const results = await Promise.all(clientProcs.map((c) => c.next('done'))) as Extract<Reply, { kind: 'done' }>[];
    const vehiclesCpu = (await vehicles.next('cpu')) as Extract<Reply, { kind: 'cpu' }>;
    const sent = (await vehicles.next('sent')) as Extract<Reply, { kind: 'sent' }>;
    for (const c of [...clientProcs, vehicles]) c.p.kill();

    const histogram = new Array<number>(results[0]!.histogram.length).fill(0);
    for (const r of results) r.histogram.forEach((n, i) => (histogram[i]! += n));
    const total = histogram.reduce((a, b) => a + b, 0);
    const pct = (p: number) => {
      let seen = 0;
      for (let i = 0; i < histogram.length; i++) if ((seen += histogram[i]!) >= (p / 100) * total) return i;
      return histogram.length;
    };
    console.log('');
    console.log(`clients / vehicles       ${fmt(CLIENTS)} / ${fmt(VEHICLES)} every ${PERIOD_S} s (${fmt(VEHICLES / PERIOD_S)} positions/s); LIVE_BATCH_MS ${config.live.batchMs}`);
    console.log(`position requests        ${fmt(sent.requests)} (${fmt(sent.errors)} errors); round trip p50 ${fmt(sent.p50)} ms, p99 ${fmt(sent.p99)} ms (ingest and commit, before publication)`);
    console.log(`messages delivered       ${fmt(delivered)} by the server in ${fmt(elapsed, 1)} s (${fmt(delivered / elapsed)}/s); ${fmt(total)} received and timed by the clients`);
    console.log(`delivery latency         p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${pct(100)} ms (position 'at' → client receipt, 1 ms buckets)`);
    const frames = results.reduce((a, r) => a + r.frames, 0);
    console.log(`frames received          ${fmt(frames)} (${fmt(frames / elapsed)}/s, ${fmt(total / Math.max(1, frames), 1)} messages a frame)`);
    const pctCore = (ms: number) => `${fmt((ms / 1000 / elapsed) * 100)} %`;
    console.log(`server CPU               ${pctCore((cpu.user + cpu.system) / 1000)} of one core (ingest, NOTIFY, fan-out; system ${pctCore(cpu.system / 1000)})`);
    console.log(`other CPU (% of a core)  clients ${results.map((r) => pctCore(r.cpuMs)).join(' + ')}; vehicles ${pctCore(vehiclesCpu.cpuMs)}; PostgreSQL ${ENGINE === 'postgres' ? pctCore(pgMs) : 'n/a'}`);
    console.log(`busiest other processes  ${others.map((o) => `${o.name} ${pctCore(o.ms)}`).join(', ')}`);
    const machineShare = (k: 'busy' | 'softirq' | 'steal') => `${fmt(((machine1[k] - machine0[k]) / (machine1.total - machine0.total)) * 100)} %`;
    const seenMs = cpu.user / 1000 + cpu.system / 1000 + results.reduce((a, r) => a + r.cpuMs, 0) + vehiclesCpu.cpuMs + (ENGINE === 'postgres' ? pgMs : 0) + others.reduce((a, o) => a + o.ms, 0);
    console.log(`unaccounted CPU          ${pctCore(machine1.busy - machine0.busy - seenMs)} (busy, less the processes above: processes that began and ended within the measurement, e.g. another engineer's unlocked command)`);
    console.log(`machine CPU              ${machineShare('busy')} busy (softirq ${machineShare('softirq')}), ${machineShare('steal')} stolen by the hypervisor, of ${cpus().length} cores`);
    const ms = (ns: number) => fmt(ns / 1e6);
    console.log(`server event loop delay  p50 ${ms(loopDelay.percentile(50))} ms, p99 ${ms(loopDelay.percentile(99))} ms, max ${ms(loopDelay.max)} ms`);
    console.log(`clients closed           ${fmt(results.reduce((a, r) => a + r.closed, 0))} (slow: ${hub.stats.slowClientsClosed}, dead: ${hub.stats.deadPeersDropped})`);
    console.log(`peak memory (RSS)        ${memory.stop()} MB`);
    console.log(`machine load average     ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores (figures are only meaningful on an idle machine)`);
  } finally {
    await app.close();
    await drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
