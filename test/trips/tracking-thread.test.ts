/**
 * Issue 16: on PostgreSQL, trip tracking is recomputed on a thread of its own (TRACKING_WORKER,
 * trips/tracking-thread.ts): the refresh after ingest, the worker's passes and the reads' refreshes
 * all run there, none on the service's database handle, and what a read answers is the same truth.
 * The thread needs a database another thread can open: these run on PostgreSQL only; the choice
 * of TRACKING_WORKER is checked on both engines.
 *
 * The truth: a bus driving north along a straight 2.224 km shape (0.02° at 48.85°N) at 0.001° a
 * minute (111.2 m/min), a position every 15 s from S1 at 07:00:30Z: on S2 (0.010°) at 07:10:30, the
 * 41st fix; the trips are driven to the 51st.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, testConfig } from '../../src/config.js';
import { insertReports, type ReportItems } from '../../src/domains/device/queries/reports.js';
import { markTrips } from '../../src/domains/trips/queries/tracking.js';
import { TRACKING_THREAD_NICE, TrackingThread, trackingOffThread } from '../../src/domains/trips/tracking-thread.js';
import { refreshDirty } from '../../src/domains/trips/tracking.js';
import { engine } from '../helpers/db.js';
import { item, newDevice, send } from '../helpers/actual.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';
import { inject, newGroup, newUser, setup, type TestApp } from '../helpers/app.js';
import { eventually } from '../feeds/fixture.js';

const DATE = '2026-03-02'; // a Monday, Europe/Paris at +01:00: 08:00 local = 07:00Z
const FEED = {
  'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.850,2.35\nS2,Second,48.860,2.35\nS3,Third,48.870,2.35\n',
  'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id,shape_id\nR1,WK,T1,Third,0,B1,SH1\nR1,WK,T2,Third,0,B2,SH1\nR1,WK,T3,Third,0,B3,SH1\n',
  'shapes.txt': 'shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\nSH1,48.850,2.35,1\nSH1,48.870,2.35,2\n',
  'stop_times.txt': ['trip_id,arrival_time,departure_time,stop_id,stop_sequence',
    ...['T1', 'T2', 'T3'].flatMap((t) => [`${t},08:00:00,08:00:00,S1,1`, `${t},08:10:00,08:11:00,S2,2`, `${t},08:20:00,08:20:00,S3,3`])].join('\n') + '\n',
};
const START = Date.parse(`${DATE}T07:00:30Z`);
const S2_AT = Date.parse(`${DATE}T07:10:30Z`);
const ref = (trip: string) => ({ trip_id: trip, service_date: DATE });
/** The bus's position k × 15 s after 07:00:30. */
const fix = (trip: string, k: number) => item('position', new Date(START + k * 15_000), { lat: 48.85 + 0.00025 * k, lon: 2.35, gps_valid: true, ...ref(trip) });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('TRACKING_WORKER', () => {
  it('auto recomputes tracking on its own thread with PostgreSQL and on the service thread with the embedded database; on needs PostgreSQL', () => {
    const pg = { reopen: { connectionString: 'postgres://h/db', schema: undefined } } as never;
    const embedded = {} as never;
    const worker = (w: string) => loadConfig({ TRACKING_WORKER: w, DATABASE_URL: 'postgres://h/db' });
    expect([trackingOffThread(worker('auto'), pg), trackingOffThread(worker('auto'), embedded)]).toEqual([true, false]);
    expect([trackingOffThread(worker('off'), pg), trackingOffThread(worker('on'), pg)]).toEqual([false, true]);
    expect(() => loadConfig({ TRACKING_WORKER: 'on' })).toThrow(ConfigError);
    expect(() => loadConfig({ TRACKING_WORKER: 'sometimes' })).toThrow(/TRACKING_WORKER/);
  });
});

describe.runIf(engine === 'postgres')('trip tracking recomputed on its own thread (PostgreSQL)', () => {
  interface Fixture { t: TestApp; g: string; device: Awaited<ReturnType<typeof newDevice>>; auth: Record<string, string>; statements: string[] }
  const fixtures = new Map<string, Fixture>();

  /** An app with TRACKING_WORKER `worker`, whose database handle records the statements sent through it. */
  async function fixtureOf(worker: 'on' | 'off'): Promise<Fixture> {
    const t = await setup({ config: { trackingWorker: worker } });
    const g = await newGroup(t);
    await importZip(t, g, minimalZip(FEED), { publish: true });
    const device = await newDevice(t, g);
    const auth = (await newUser(t, { groupId: g, role: 'operator' })).auth;
    const statements: string[] = [];
    const query = t.db.query.bind(t.db);
    Object.assign(t.db, { query: (text: string, params?: unknown[]) => (statements.push(text), query(text, params as never)) });
    return { t, g, device, auth, statements };
  }
  beforeAll(async () => {
    fixtures.set('on', await fixtureOf('on'));
    fixtures.set('off', await fixtureOf('off'));
  });
  afterAll(async () => {
    for (const f of fixtures.values()) await f.t.close();
  });

  /** Stores reports as device ingest does (the reports and their trips' marks, one statement), without the refresh after it. */
  async function store(f: Fixture, items: ReturnType<typeof item>[]): Promise<void> {
    const r: ReportItems = { runs: [], events: [], positions: [], counts: [], movements: [] };
    for (const x of items) {
      if (x.type === 'position') r.positions.push({ item: x as never });
      else if (x.type === 'trip_start' || x.type === 'trip_end') r.runs.push({ type: x.type, at: new Date(x.at), item: x as never });
    }
    await f.t.ctx.services.partitions.ensure(r.positions.map((p) => ({ table: 'positions' as const, at: new Date(p.item.at) })));
    await insertReports(f.t.db, markTrips, f.g, f.device.deviceId, r, new Date());
  }
  const marks = async (f: Fixture) => (await f.t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM trip_tracking_dirty WHERE group_id = $1', [f.g]))[0]!.n;
  const s2 = async (f: Fixture, trip: string) => {
    const r = await inject(f.t, { url: `/api/v4/groups/${f.g}/trips/${trip}?date=${DATE}`, headers: f.auth });
    expect(r.status).toBe(200);
    return (r.json.delay as { stop_id: string; actual_at: string | null }[]).find((s) => s.stop_id === 'S2')!;
  };

  it.each(['on', 'off'] as const)(
    'TRACKING_WORKER=%s: a trip driven through the device API passes S2 at 07:10:30 (±30 s) in the trip object; its rounds write through the service\'s handle only when off',
    async (worker) => {
      const f = fixtures.get(worker)!;
      f.statements.length = 0;
      for (const ks of [range(0, 19), range(20, 39), range(40, 50)]) {
        const r = await send(f.t, f.g, f.device.auth, ks[0] === 0 ? [item('trip_start', `${DATE}T06:59:00Z`, ref('T1')), ...ks.map((k) => fix('T1', k))] : ks.map((k) => fix('T1', k)));
        expect(r.json.rejected).toEqual([]);
      }
      const stop = await s2(f, 'T1');
      expect(Math.abs(Date.parse(stop.actual_at!) - S2_AT)).toBeLessThanOrEqual(30_000);
      await eventually(async () => (await marks(f)) === 0, 'the refresh after ingest done');
      const written = f.statements.filter((s) => s.includes('INSERT INTO trip_tracking_stops')).length;
      if (worker === 'on') expect(written).toBe(0);
      else expect(written).toBeGreaterThan(0);
    },
  );

  /** A thread's nice value (field 19 of /proc/self/task/<tid>/stat, after the parenthesised name). */
  const niceOf = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);

  it(`runs at nice ${TRACKING_THREAD_NICE} (Linux), the service's other threads at the process's: on a full machine the device answers and the feeds go first`, async () => {
    /** This process's threads' nice values. */
    const nices = () => readdirSync('/proc/self/task').map(niceOf);
    const f = fixtures.get('on')!;
    // Started by the batches of the test before (a thread of its own, used).
    expect(await refreshDirty(f.t.db, { groupId: f.g })).toBe(0);
    const all = nices();
    expect(all.filter((n) => n === TRACKING_THREAD_NICE).length).toBeGreaterThanOrEqual(1);
    expect(Math.min(...all)).toBe(0);
  });

  it.runIf(process.platform === 'linux')("names its thread `tracking` (top -H, ps -L), the one at the lower priority, whose CPU time /metrics tells apart", async () => {
    const f = fixtures.get('on')!;
    expect(await refreshDirty(f.t.db, { groupId: f.g })).toBe(0);
    const named = readdirSync('/proc/self/task').filter((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'tracking');
    expect(named).toHaveLength(1);
    expect(niceOf(named[0]!)).toBe(TRACKING_THREAD_NICE);
    const text = (await inject(f.t, { url: '/metrics' })).body;
    expect(Number(/^transit_ops_thread_cpu_seconds_total\{thread="tracking"\} (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
  });

  it('a read recomputes the trips it covers first, on the thread: reports stored without the refresh after ingest are in the trip object it answers (S2 at 07:10:30 ±30 s)', async () => {
    const f = fixtures.get('on')!;
    f.statements.length = 0;
    await store(f, [item('trip_start', `${DATE}T06:59:00Z`, ref('T2')), ...range(0, 50).map((k) => fix('T2', k))]);
    expect(await marks(f)).toBe(1);
    const stop = await s2(f, 'T2');
    expect(Math.abs(Date.parse(stop.actual_at!) - S2_AT)).toBeLessThanOrEqual(30_000);
    expect(await marks(f)).toBe(0);
    expect(f.statements.filter((s) => s.includes('INSERT INTO trip_tracking_stops'))).toEqual([]);
  });

  it('a thread that ended is started again by the next ask: a refresh after it was stopped recomputes the trips marked', async () => {
    const f = fixtures.get('on')!;
    const client = (f.t.ctx.services.tracking as unknown as { thread: { worker: { terminate(): Promise<number> } | undefined } }).thread;
    await client.worker!.terminate();
    await eventually(async () => client.worker === undefined, 'the thread seen ended');
    await store(f, [fix('T2', 51)]);
    expect(await refreshDirty(f.t.db, { groupId: f.g })).toBe(1);
    expect(client.worker).toBeDefined();
    expect(await marks(f)).toBe(0);
  });

  it("a trip left marked (a refresh cut by a restart) is recomputed by the worker's pass with no batch or read; once closed, the handle recomputes on the service's thread", async () => {
    const f = fixtures.get('on')!;
    // The app's own service closed: a new one, its pass every 50 ms, that has not been used yet.
    await f.t.ctx.services.tracking.close();
    const tracking = new TrackingThread({ config: testConfig(), db: f.t.db, log: f.t.ctx.log }, 50);
    await tracking.start();
    try {
      await store(f, [item('trip_start', `${DATE}T06:59:00Z`, ref('T3')), ...range(0, 50).map((k) => fix('T3', k))]);
      await eventually(async () => (await marks(f)) === 0, "the worker's pass done");
      const [row] = await f.t.db.query<{ passed: number }>(
        "SELECT extract(epoch FROM actual_at)::float8 * 1000 AS passed FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2 AND trip_id = 'T3' AND stop_id = 'S2'", [f.g, DATE]);
      expect(Math.abs(row!.passed - S2_AT)).toBeLessThanOrEqual(30_000);
    } finally {
      await tracking.close();
    }
    f.statements.length = 0;
    await store(f, [fix('T3', 51)]);
    expect(await refreshDirty(f.t.db, { groupId: f.g })).toBe(1);
    expect(f.statements.filter((s) => s.includes('INSERT INTO trip_tracking_stops')).length).toBeGreaterThan(0);
  });
});
