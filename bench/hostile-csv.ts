/**
 * npx tsx bench/hostile-csv.ts: how long GET /health waits while hostile CSV bodies are processed
 * (security issue #15, item 7: a 1,000,000-column header blocked /health for 23 s).
 *
 * The service runs as its own process (this file with --serve) on the embedded database (PGlite
 * in memory), listening on a loopback port; this process sends each hostile body once, and
 * meanwhile (after one small request to each route, to warm it up) asks /health every 5 ms (one request at a time) and records each answer's latency.
 * Printed per body: the status and size of the answer, how long it took, how many /health
 * answers came meanwhile, the largest /health latency, and the largest delay of the server's
 * event loop (measured in the server: on a busy machine /health also waits for a core).
 * Figures only: nothing is asserted (test/hardening/hostile-input.test.ts asserts the behaviour).
 */
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

if (process.argv.includes('--serve')) {
  await serve();
} else {
  await measure();
}

async function serve() {
  const { buildApp } = await import('../src/app.js');
  const { testConfig } = await import('../src/config.js');
  const { openPglite } = await import('../src/platform/db/pglite.js');
  const { migrate } = await import('../src/platform/db/migrate.js');
  const { createGroup } = await import('../src/domains/groups/service.js');
  const { hashSecret, newSecret, objectId } = await import('../src/platform/ids.js');
  const db = await openPglite('memory://');
  await migrate(db);
  const app = await buildApp({ config: testConfig(), db, logger: false });
  await createGroup(app.ctx, { group_id: 'bench', name: 'Bench', features: [], timezone: 'Europe/Paris' } as never);
  const userId = objectId();
  await db.query('INSERT INTO users (user_id, email, password_hash, superuser, organization) VALUES ($1, $2, NULL, false, $3)', [userId, 'admin@bench.example', 'Bench']);
  await db.query('INSERT INTO memberships (group_id, user_id, role, teams) VALUES ($1, $2, $3, $4)', ['bench', userId, 'admin', []]);
  const token = newSecret('');
  await db.query("INSERT INTO sessions (session_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '1 day')", [hashSecret(token), userId]);
  // The parent asks for the largest event-loop delay since its last question.
  let delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  process.on('message', () => {
    process.send!(delay.max / 1e6);
    delay.disable();
    delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(`listening ${address} ${token}`);
}

async function measure() {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, '--serve'], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const loopDelay = () => new Promise<number>((resolve) => {
    child.once('message', (ms) => resolve(ms as number));
    child.send('report');
  });
  const [base, token] = await new Promise<[string, string]>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening (\S+) (\S+)/.exec(out);
      if (m) resolve([m[1]!, m[2]!]);
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening`)));
  });
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'text/csv' };
  const columns = Array.from({ length: 1_000_000 }, (_, i) => `c${i}`).join(';');
  const cases: { name: string; url: string; body: string }[] = [
    { name: 'planning, 1,000,000-column header', url: '/api/v4/groups/bench/planning?format=csv', body: `${columns}\r\n` },
    { name: 'planning, one 10 MB line', url: '/api/v4/groups/bench/planning?format=csv', body: `trip_id;date\r\n${'x'.repeat(10_000_000)};20260316\r\n` },
    { name: 'planning, 100,000 bad lines', url: '/api/v4/groups/bench/planning?format=csv', body: `trip_id;date\r\n${'T;2026-03-16\r\n'.repeat(100_000)}` },
    { name: 'vehicles import, 1,000,000-column header', url: '/api/v4/groups/bench/import/vehicles', body: `${columns}\r\n` },
    { name: 'drivers import, 1,000,000-column header', url: '/api/v4/groups/bench/import/drivers', body: `${columns}\r\n` },
  ];
  try {
    // Warm-up: the first request of each route compiles and loads what a cold server lacks.
    for (const c of cases) {
      await (await fetch(`${base}${c.url}`, { method: c.url.includes('planning') ? 'PUT' : 'POST', headers: auth, body: 'trip_id;date\r\nT1;2026-03-16\r\n' })).text();
    }
    for (const c of cases) {
      await loopDelay();
      let done = false;
      const latencies: number[] = [];
      const poll = (async () => {
        while (!done) {
          const start = performance.now();
          await (await fetch(`${base}/health`)).text();
          latencies.push(performance.now() - start);
          await sleep(5);
        }
      })();
      const start = performance.now();
      const res = await fetch(`${base}${c.url}`, { method: c.url.includes('planning') ? 'PUT' : 'POST', headers: auth, body: c.body });
      const answer = await res.text();
      const took = performance.now() - start;
      done = true;
      await poll;
      const serverDelay = await loopDelay();
      console.log(
        `${c.name}: ${res.status}, ${answer.length.toLocaleString('en')} bytes in ${took.toFixed(0)} ms; ` +
          `/health answered ${latencies.length} times, max ${Math.max(...latencies).toFixed(1)} ms; server event loop delayed at most ${serverDelay.toFixed(1)} ms` +
          `\n  ${answer.slice(0, 200)}`,
      );
    }
  } finally {
    child.kill('SIGTERM');
  }
}
