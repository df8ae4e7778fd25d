/**
 * npm run bench:api: autocannon against a representative set of authenticated reads, on
 * PostgreSQL, next to a bare Fastify hello-world measured in the same run.
 *
 * The service runs as its own process (node --import tsx src/main.ts serve) on a fresh schema of
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test, dropped at the end) loaded with
 * the demo network (routes with shapes, a published GTFS, drivers, vehicles, devices, planning of
 * today) plus BENCH_EXTRA_VEHICLES more vehicles (default 500). The hello-world runs as another
 * process; autocannon runs here. Each endpoint is measured twice:
 *   - throughput: BENCH_CONNECTIONS (10) connections for BENCH_SECONDS (8 s), requests/s as a
 *     ratio of hello-world's, target >= 0.25;
 *   - latency: a fixed 1,000 requests/s for BENCH_SECONDS, p99 latency, target < 25 ms.
 * Every answer must be 200 (non-2xx are counted and printed). Every request, hello-world's too,
 * carries `Accept-Encoding: gzip, deflate, br` as browsers and common HTTP clients send it (the
 * cached reads then answer their gzip form; BENCH_ACCEPT_ENCODING= sends none). BENCH_PROFILE_DIR=dir
 * writes a CPU profile of the service there; BENCH_ONLY=trip measures only the reads whose name holds it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { createApiKey, hostPrincipal, wholeGroup } from '../src/domains/auth/service.js';
import { loadDemo } from '../src/domains/demo/load.js';
import { createVehicle } from '../src/domains/fleet/vehicles.js';
import { systemClock } from '../src/platform/clock.js';
import { appContext } from '../src/app.js';
import type { AppContext } from '../src/platform/context.js';
import { testConfig } from '../src/config.js';
import { DATABASE_URL, benchDatabase, fmt } from './support.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 10);
const EXTRA_VEHICLES = Number(process.env['BENCH_EXTRA_VEHICLES'] ?? 500);
const RATE = 1000;
const ACCEPT_ENCODING = process.env['BENCH_ACCEPT_ENCODING'] ?? 'gzip, deflate, br';

const HELLO = `
import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log('listening ' + address);
`;

async function startProcess(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const base = await new Promise<string>((resolve, reject) => {
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = ready.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited (${code}) before listening:\n${out.slice(-2000)}`)));
  });
  return { child, base };
}

async function stop(child: ChildProcess) {
  child.kill('SIGTERM');
  await once(child, 'exit');
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function cannon(url: string, headers: Record<string, string>, o: { rate?: number }): Promise<Figures> {
  const r = await autocannon({
    url,
    headers: ACCEPT_ENCODING ? { ...headers, 'accept-encoding': ACCEPT_ENCODING } : headers,
    connections: o.rate ? 20 : CONNECTIONS,
    duration: SECONDS,
    ...(o.rate ? { overallRate: o.rate } : {}),
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors + r.timeouts };
}

async function main() {
  const { db, schema, drop } = await benchDatabase('postgres');
  const children: ChildProcess[] = [];
  try {
    const ctx: AppContext = appContext({ config: testConfig(), db, clock: systemClock, log: console as never });
    console.log('loading the demo network…');
    const demo = await loadDemo(ctx);
    const scope = { groupId: demo.groupId, role: 'admin' as const, teams: null, driverId: null, timezone: 'Europe/Paris', features: [] };
    for (let i = 0; i < EXTRA_VEHICLES; i++) {
      await createVehicle(ctx, scope as never, { vehicle_id: `bench-${i}`, fleet_number: String(5000 + i), license_plate: `BE-${String(i).padStart(3, '0')}-NC`, teams: [i % 2 ? 'nord' : 'sud'], capacity: 90 } as never);
    }
    const key = await createApiKey(ctx, hostPrincipal, wholeGroup(demo.groupId), { role: 'operator', group_ids: [demo.groupId] } as never);
    const auth = { 'x-api-key': key.value };

    const url = new URL(DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${schema!}`);
    const profile = process.env['BENCH_PROFILE_DIR'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_PROFILE_DIR']}`] : [];
    const svc = await startProcess([...profile, '--import', 'tsx', 'src/main.ts', 'serve'], { DATABASE_URL: url.toString(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', TRANSIT_OPS_DEMO: '0' }, /running on (http:\/\/[^\s]+)/);
    children.push(svc.child);
    const hello = await startProcess(['--input-type=module', '-e', HELLO], {}, /listening (http:\/\/[^\s]+)/);
    children.push(hello.child);

    const g = `${svc.base}/api/v4/groups/${demo.groupId}`;
    const date8 = demo.serviceDate.replaceAll('-', '');
    const trips = (await (await fetch(`${g}/trips?date=${date8}`, { headers: auth })).json()) as { trip_id?: string; id?: string }[];
    const tripId = trips[0]?.trip_id ?? trips[0]?.id;
    const doc = (await (await fetch(`${svc.base}/api/v4/openapi/internal.json`)).json()) as { paths: Record<string, unknown> };
    const feedPath = Object.keys(doc.paths).find((p) => p.endsWith('/gtfs-rt/vehicle-positions'));

    const reads: [string, string][] = [
      ['vehicles list', `${g}/vehicles`],
      ...(tripId ? [['trip object', `${g}/trips/${encodeURIComponent(tripId)}?date=${demo.serviceDate}`] as [string, string]] : []),
      ['planning of a day', `${g}/planning?date=${date8}`],
      ...(feedPath ? [['GTFS-RT vehicle positions', `${svc.base}${feedPath.replace('{group_id}', demo.groupId)}`] as [string, string]] : []),
    ];
    const only = process.env['BENCH_ONLY'];
    if (only) reads.splice(0, reads.length, ...reads.filter(([name]) => name.includes(only)));
    for (const [name, u] of reads) {
      const r = await fetch(u, { headers: auth });
      if (r.status !== 200) throw new Error(`${name}: ${u} answered ${r.status} ${(await r.text()).slice(0, 300)}`);
    }
    if (!tripId) console.log('(no trip on the demo service date: the trip object is not measured)');
    if (!feedPath) console.log('(no GTFS-RT route served yet: the feed is not measured)');

    console.log(`\nAccept-Encoding: ${ACCEPT_ENCODING || '(none)'}; warming up… then ${SECONDS} s per run, ${CONNECTIONS} connections for throughput, ${RATE} req/s for latency`);
    await cannon(`${hello.base}/hello`, {}, {});
    const base = await cannon(`${hello.base}/hello`, {}, {});
    const rows: string[] = [];
    rows.push(`| endpoint | req/s | ratio to hello-world | p99 at max (ms) | p50 / p99 at ${RATE} req/s (ms) | non-2xx |`);
    rows.push('|---|---:|---:|---:|---:|---:|');
    const baseAtRate = await cannon(`${hello.base}/hello`, {}, { rate: RATE });
    rows.push(`| hello-world (bare Fastify) | ${fmt(base.rps)} | 1.00 | ${base.p99} | ${baseAtRate.p50} / ${baseAtRate.p99} | ${base.non2xx + baseAtRate.non2xx} |`);
    let ok = true;
    for (const [name, u] of reads) {
      await cannon(u, auth, { rate: 200 }).catch(() => undefined);
      const max = await cannon(u, auth, {});
      const fixed = await cannon(u, auth, { rate: RATE });
      const ratio = max.rps / base.rps;
      const pass = ratio >= 0.25 && fixed.p99 < 25 && max.non2xx + fixed.non2xx === 0;
      ok &&= pass;
      rows.push(`| ${name} | ${fmt(max.rps)} | ${fmt(ratio, 2)} | ${max.p99} | ${fixed.p50} / ${fixed.p99} | ${max.non2xx + fixed.non2xx} |${pass ? '' : ' below target'}`);
    }
    console.log(`\n${rows.join('\n')}\n`);
    console.log(ok ? 'every read meets the targets (>= 0.25 of hello-world, p99 < 25 ms at 1,000 req/s)' : 'some reads miss the targets (see above)');
  } finally {
    for (const c of children) await stop(c).catch(() => undefined);
    await drop();
  }
}

await main();
