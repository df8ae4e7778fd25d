/**
 * Faults, against PostgreSQL (they kill connections and processes; an in-memory PGlite has neither,
 * so on PGlite the file is skipped, and says so):
 * - database connections killed while devices keep sending batches with retries: afterwards the
 *   stored items are exactly the distinct items sent, nothing lost, nothing doubled;
 * - the service process killed (SIGKILL) in the middle of a GTFS import and of a CSV import: the
 *   previous state is intact (published version, rows, drivers);
 * - graceful shutdown (SIGTERM) under load: every request answered 2xx is stored.
 * The service runs as a real child process (`tsx src/main.ts serve`) on the test's schema.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { newDevice } from '../helpers/actual.js';
import { databaseUrl, engine } from '../helpers/db.js';
import { minimalZip } from '../helpers/gtfs.js';

const onPostgres = engine === 'postgres';

let t: TestApp;
let g: string;
let admin: TestUser;
beforeAll(async () => {
  if (!onPostgres) return;
  t = await setup();
  g = await newGroup(t);
  admin = await newUser(t, { groupId: g, role: 'admin' });
});
afterAll(async () => t?.close());

/** The service as a child process on this test's schema; resolves once it listens. */
async function startService(): Promise<{ child: ChildProcess; base: string; exited: Promise<number | null>; output: () => string }> {
  const url = new URL(databaseUrl!);
  url.searchParams.set('options', `-c search_path=${t.testDb.schema}`);
  // Its connections carry a name of their own: the killer below touches nothing else.
  url.searchParams.set('application_name', serviceName());
  // Positions kept for ever: the batches below are dated in May 2026, older than the default retention.
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    env: {
      ...process.env, DATABASE_URL: url.toString(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', TRANSIT_OPS_DEMO: '0', RATE_LIMIT_EXPORTS_PER_MINUTE: '100000',
      POSITIONS_RETENTION_DAYS: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  let out = '';
  const base = await new Promise<string>((resolve, reject) => {
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`the service exited (${code}) before listening:\n${out.slice(-2000)}`)));
  });
  return { child, base, exited, output: () => out };
}

/** Another connection to the test's schema, to watch and to kill the service's connections. */
async function observer(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: databaseUrl, options: `-c search_path=${t.testDb.schema}` });
  await c.connect();
  return c;
}

const serviceName = () => `fault-svc-${t.testDb.schema}`;

const count = async (sql: string, params: unknown[] = []) => Number((await t.db.query<{ n: string }>(sql, params))[0]!.n);

describe.skipIf(!onPostgres)('faults (PostgreSQL)', () => {
  it('connections killed while devices send batches with retries: stored = distinct sent', async () => {
    const svc = await startService();
    const obs = await observer();
    let killing = true;
    try {
      const devices = await Promise.all([1, 2, 3].map(() => newDevice(t, g)));
      const sent = new Set<string>();
      let retries = 0;
      // Kill every other connection of this database (the service's pool) every 150 ms.
      const killer = (async () => {
        let kills = 0;
        while (killing) {
          const r = await obs.query(
            'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
            [serviceName()],
          );
          kills += (r.rows[0] as { n: number }).n;
          await sleep(150);
        }
        return kills;
      })();
      const base = new Date('2026-05-04T06:00:00Z').getTime();
      await Promise.all(devices.map(async (dev, d) => {
        for (let b = 0; b < 25; b++) {
          const items = Array.from({ length: 40 }, (_, i) => ({
            id: randomUUID(), type: 'position', at: new Date(base + (d * 100_000 + b * 40 + i) * 1000).toISOString(), lat: 45.75 + i / 1e4, lon: 4.85, gps_valid: true,
          }));
          for (const it of items) sent.add(it.id);
          // Retry the same batch until it is acknowledged; now and then resend an acknowledged one
          // (a lost answer).
          for (let attempt = 0; ; attempt++) {
            if (attempt > 500) throw new Error(`batch ${b} of device ${d} never acknowledged after 500 attempts`);
            try {
              const r = await fetch(`${svc.base}/api/v4/groups/${g}/device/reports`, { method: 'POST', headers: { ...dev.auth, 'content-type': 'application/json' }, body: JSON.stringify({ items }) });
              if (r.status === 200 || r.status === 207) {
                if (b % 5 === 0 && attempt === 0) continue;
                break;
              }
              expect(r.status, await r.text()).toBeGreaterThanOrEqual(500);
            } catch {
              // connection refused or reset: retry
            }
            retries++;
            await sleep(20);
          }
        }
      }));
      killing = false;
      const kills = await killer;
      expect(kills).toBeGreaterThan(0);
      expect(retries).toBeGreaterThan(0);
      const ids = devices.map((d) => d.deviceId);
      expect(await count('SELECT count(*) AS n FROM positions WHERE group_id = $1 AND device_id = ANY($2)', [g, ids])).toBe(sent.size);
      expect(await count('SELECT count(DISTINCT client_id) AS n FROM positions WHERE group_id = $1 AND device_id = ANY($2)', [g, ids])).toBe(sent.size);
    } finally {
      killing = false;
      svc.child.kill('SIGKILL');
      await svc.exited;
      await sleep(300);
      await obs.end();
    }
  }, 300_000);

  it('the process killed in the middle of a GTFS import: the published version and its rows are intact', async () => {
    const small = minimalZip();
    const svc = await startService();
    const obs = await observer();
    const dir = await mkdtemp(join(tmpdir(), 'transit-ops-faults-'));
    try {
      const up = await fetch(`${svc.base}/api/v4/groups/${g}/gtfs`, { method: 'POST', headers: { ...admin.auth, 'content-type': 'application/zip' }, body: small });
      expect(up.status, await up.clone().text()).toBe(201);
      const { gtfs_id } = (await up.json()) as { gtfs_id: string };
      expect((await fetch(`${svc.base}/api/v4/groups/${g}/gtfs/${gtfs_id}/publish`, { method: 'POST', headers: admin.auth })).status).toBe(200);
      const before = await snapshotGtfs();

      // A big feed, killed while its rows are being loaded.
      const big = bigFeed(4000, 40);
      const path = join(dir, 'big.zip');
      await writeFile(path, big);
      const upload = fetch(`${svc.base}/api/v4/groups/${g}/gtfs`, { method: 'POST', headers: { ...admin.auth, 'content-type': 'application/zip' }, body: big }).catch((e: unknown) => e);
      await waitFor(obs, "query ILIKE 'COPY%' OR query ILIKE 'INSERT INTO stop_times%' OR query ILIKE 'INSERT INTO gtfs_stop_times%'");
      svc.child.kill('SIGKILL');
      expect(await upload).toBeInstanceOf(Error);
      await svc.exited;
      await sleep(200);
      expect(await snapshotGtfs()).toEqual(before);
    } finally {
      svc.child.kill('SIGKILL');
      await obs.end();
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('the process killed in the middle of a drivers CSV import: the drivers are as before', async () => {
    const svc = await startService();
    const obs = await observer();
    try {
      const header = 'id;driver_name;staff_number;teams;comment;archived;code';
      const first = [header, ...Array.from({ length: 50 }, (_, i) => `${i.toString(16).padStart(24, '0')};Driver ${i};S${i};;;False;C${i}`)].join('\n');
      const r = await fetch(`${svc.base}/api/v4/groups/${g}/import/drivers`, { method: 'POST', headers: { ...admin.auth, 'content-type': 'text/csv' }, body: first });
      expect(r.status, await r.clone().text()).toBeLessThan(300);
      const before = await t.db.query('SELECT driver_id, driver_name, staff_number FROM drivers WHERE group_id = $1 ORDER BY driver_id', [g]);
      expect(before).toHaveLength(50);
      const big = [header, ...Array.from({ length: 60_000 }, (_, i) => `${(i + 1_000_000).toString(16).padStart(24, '0')};Other ${i};T${i};;;False;D${i}`)].join('\n');
      const upload = fetch(`${svc.base}/api/v4/groups/${g}/import/drivers`, { method: 'POST', headers: { ...admin.auth, 'content-type': 'text/csv' }, body: big }).catch((e: unknown) => e);
      await waitFor(obs, "query ILIKE '%drivers%' AND state IN ('active', 'idle in transaction')");
      svc.child.kill('SIGKILL');
      await upload;
      await svc.exited;
      await sleep(200);
      expect(await t.db.query('SELECT driver_id, driver_name, staff_number FROM drivers WHERE group_id = $1 ORDER BY driver_id', [g])).toEqual(before);
    } finally {
      svc.child.kill('SIGKILL');
      await obs.end();
    }
  }, 300_000);

  it('graceful shutdown under load: every acknowledged batch is stored', async () => {
    const svc = await startService();
    try {
      const devices = await Promise.all([1, 2, 3, 4].map(() => newDevice(t, g)));
      const acknowledged: string[] = [];
      let refused = 0;
      let stop = false;
      const base = new Date('2026-05-05T06:00:00Z').getTime();
      let n = 0;
      const clients = devices.map(async (dev) => {
        while (!stop) {
          const items = Array.from({ length: 20 }, () => ({ id: randomUUID(), type: 'position', at: new Date(base + ++n * 1000).toISOString(), lat: 45.7, lon: 4.8, gps_valid: true }));
          try {
            const r = await fetch(`${svc.base}/api/v4/groups/${g}/device/reports`, { method: 'POST', headers: { ...dev.auth, 'content-type': 'application/json' }, body: JSON.stringify({ items }) });
            const body = (await r.json()) as { accepted?: string[] };
            if (r.status === 200 || r.status === 207) acknowledged.push(...(body.accepted ?? []));
            else refused++;
          } catch {
            refused++;
            await sleep(10);
          }
        }
      });
      await sleep(1500);
      svc.child.kill('SIGTERM');
      const code = await svc.exited;
      stop = true;
      await Promise.all(clients);
      expect(code).toBe(0);
      expect(acknowledged.length).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
      const stored = new Set((await t.db.query<{ client_id: string }>('SELECT client_id::text AS client_id FROM positions WHERE group_id = $1 AND device_id = ANY($2)', [g, devices.map((d) => d.deviceId)])).map((r) => r.client_id));
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      svc.child.kill('SIGKILL');
    }
  }, 300_000);
});

async function snapshotGtfs() {
  return {
    versions: await t.db.query('SELECT gtfs_id, name FROM gtfs_versions WHERE group_id = $1 ORDER BY gtfs_id', [g]),
    publications: await t.db.query('SELECT gtfs_id, published_at FROM gtfs_publications WHERE group_id = $1 ORDER BY publication_id', [g]),
    stopTimes: await count('SELECT count(*) AS n FROM gtfs_stop_times WHERE group_id = $1', [g]),
    trips: await count('SELECT count(*) AS n FROM gtfs_trips WHERE group_id = $1', [g]),
  };
}

/** The minimal feed with many trips of many stops (stop_times large enough to kill mid-load). */
function bigFeed(trips: number, stops: number): Buffer {
  const stopLines = Array.from({ length: stops }, (_, i) => `S${i},Stop ${i},${48.8 + i / 1000},${2.3 + i / 1000}`);
  const tripLines = Array.from({ length: trips }, (_, i) => `R1,WK,T${i},Terminus,0,B${i % 50}`);
  const st: string[] = [];
  for (let i = 0; i < trips; i++) {
    for (let s = 0; s < stops; s++) {
      const sec = 5 * 3600 + (i % 200) * 300 + s * 90;
      const hms = `${String(Math.floor(sec / 3600)).padStart(2, '0')}:${String(Math.floor(sec / 60) % 60).padStart(2, '0')}:${String(sec % 60).padStart(2, '0')}`;
      st.push(`T${i},${hms},${hms},S${s},${s + 1}`);
    }
  }
  return minimalZip({
    'stops.txt': `stop_id,stop_name,stop_lat,stop_lon\n${stopLines.join('\n')}\n`,
    'trips.txt': `route_id,service_id,trip_id,trip_headsign,direction_id,block_id\n${tripLines.join('\n')}\n`,
    'stop_times.txt': `trip_id,arrival_time,departure_time,stop_id,stop_sequence\n${st.join('\n')}\n`,
  });
}

/** Waits until a connection of the database runs a matching statement. */
async function waitFor(obs: pg.Client, condition: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    const r = await obs.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND (${condition})`, [serviceName()]);
    if ((r.rows[0] as { n: number }).n > 0) return;
    await sleep(5);
  }
  throw new Error(`no connection ran ${condition} within 10 s`);
}
