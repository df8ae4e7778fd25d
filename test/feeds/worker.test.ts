/**
 * Issue 16: on PostgreSQL the feeds are read and built on a worker thread of their own
 * (FEEDS_WORKER, feed-thread.ts). What the worker serves is checked against the feeds built on the
 * service's thread: a second app on the same database and the same clock, with the worker off,
 * answers every feed byte for byte the same, before and after an update and a vehicle's reports.
 * The worker needs a database another thread can open: these run on PostgreSQL only; the choice
 * of FEEDS_WORKER is checked on both engines.
 */
import { gunzipSync } from 'node:zlib';
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig, testConfig } from '../../src/config.js';
import { FeedThread, feedsOffThread } from '../../src/domains/feeds/feed-thread.js';
import { WORKER_YOUNG_GENERATION_MB } from '../../src/platform/thread.js';
import { samplePredictions } from '../../src/domains/predictions/samples.js';
import type { FastifyInstance } from 'fastify';
import { engine } from '../helpers/db.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { eventually, feedFixture, putUpdate, readFeed, rt, settled, type FeedFixture } from './fixture.js';

describe('FEEDS_WORKER', () => {
  it('auto builds the feeds on the worker thread with PostgreSQL and on the service thread with the embedded database; on needs PostgreSQL', () => {
    const pg = { reopen: { connectionString: 'postgres://h/db', schema: undefined } } as never;
    const embedded = {} as never;
    const worker = (w: string) => ({ feeds: loadConfig({ FEEDS_WORKER: w, DATABASE_URL: 'postgres://h/db' }).feeds });
    expect([feedsOffThread(worker('auto'), pg), feedsOffThread(worker('auto'), embedded)]).toEqual([true, false]);
    expect([feedsOffThread(worker('off'), pg), feedsOffThread(worker('on'), pg)]).toEqual([false, true]);
    expect(() => loadConfig({ FEEDS_WORKER: 'on' })).toThrow(ConfigError);
    expect(() => loadConfig({ FEEDS_WORKER: 'sometimes' })).toThrow(/FEEDS_WORKER/);
  });
});

describe.runIf(engine === 'postgres')('the feeds built on their worker thread (PostgreSQL)', () => {
  let f: FeedFixture;
  /** The same database and clock, the feeds built on its own thread. */
  let here: FastifyInstance;
  beforeAll(async () => {
    f = await feedFixture({ config: { feeds: { ...testConfig().feeds, worker: 'on' } } });
    here = await buildApp({ config: testConfig(), db: f.t.db, clock: f.clock, logger: false });
    await here.ready();
  });
  afterAll(async () => {
    await here?.close();
    await f?.t.close();
  });

  const PATHS = [
    'gtfs-rt/vehicle-positions', 'gtfs-rt/trip-updates', 'gtfs-rt/alerts', 'gtfs-rt/trip-modifications', 'gtfs-rt/trip-updates?format=json',
    'siri/estimated-timetable', 'siri/vehicle-monitoring', 'siri/situation-exchange', 'siri/stop-monitoring?MonitoringRef=S2&PreviewInterval=PT3H',
  ];

  /**
   * Every feed from both apps once both serve a snapshot of the clock's time (gunzipped when it
   * came gzipped), taken once the tracking rounds recomputed every trip reported on: the worker
   * reads the tracking as they leave it, the service's thread recomputes those trips first.
   */
  async function both() {
    await eventually(async () => (await f.t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM trip_tracking_dirty'))[0]!.n === 0, 'the tracking rounds done');
    f.clock.advance(5_000);
    await settled(f);
    const at = Math.floor(f.clock.now().getTime() / 1000);
    // Its timetable too: built after the snapshot is served (cache.ts builtLast), the one before answered until then.
    await eventually(
      async () => headerAt(await here.inject({ url: `/api/v4/groups/${f.g}/gtfs-rt/alerts` })) === at && !here.ctx.services.feeds.rebuilding(f.g),
      'the service-thread app at the clock, every output of it',
    );
    const read = async (app: FastifyInstance, path: string) => {
      const res = await app.inject({ url: `/api/v4/groups/${f.g}/${path}`, headers: { 'accept-encoding': 'gzip' } });
      const body = res.headers['content-encoding'] === 'gzip' ? gunzipSync(res.rawPayload) : res.rawPayload;
      return { path, status: res.statusCode, etag: res.headers.etag, body: body.toString('base64') };
    };
    const worker = await Promise.all(PATHS.map((p) => read(f.t.app, p)));
    const local = await Promise.all(PATHS.map((p) => read(here, p)));
    return { worker, local };
  }
  /** A GTFS-Realtime answer's header timestamp. */
  const headerAt = (res: { statusCode: number; rawPayload: Buffer }) => (res.statusCode === 200 ? Number(rt.FeedMessage.decode(res.rawPayload).header.timestamp) : -1);

  it.runIf(process.platform === 'linux')("names its thread `feeds` (top -H, ps -L), whose CPU time /metrics tells apart from the service's own", async () => {
    // The worker is started by the first feed asked for.
    expect((await f.t.app.inject({ url: `/api/v4/groups/${f.g}/gtfs-rt/vehicle-positions` })).statusCode).toBe(200);
    const text = (await f.t.app.inject({ url: '/metrics' })).body;
    const cpu = (thread: string) => Number(new RegExp(`^transit_ops_thread_cpu_seconds_total\\{thread="${thread}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(cpu('feeds')).toBeGreaterThan(0);
    expect(cpu('main')).toBeGreaterThan(0);
  });

  it('is the one the app uses, and serves every feed as the service thread builds it, byte for byte', async () => {
    expect(f.t.ctx.services.feeds.offThread).toBe(true);
    expect(here.ctx.services.feeds.offThread).toBe(false);
    const { worker, local } = await both();
    expect(worker.map((r) => r.status)).toEqual(PATHS.map(() => 200));
    expect(worker).toEqual(local);
  });

  it('after an update and a vehicle reporting, the next snapshot tells them, the same as the service thread does', async () => {
    const cancelled = await putUpdate(f, { update_id: 'w-cancel', kind: 'cancel', trip_id: 'T4', start_date: '2026-03-10', end_date: '2026-03-10', message: { header: 'Trip cancelled', cause: 'STRIKE' } });
    expect(cancelled.status).toBe(200);
    const d = await newDevice(f.t, f.g);
    const vehicle = await newVehicle(f.t, f.g);
    const driver = await newDriver(f.t, f.g);
    const sent = await send(f.t, f.g, d.auth, [
      item('sign_on', '2026-03-10T07:00:00Z', { driver_id: driver, vehicle_id: vehicle }),
      item('position', new Date(f.clock.now().getTime() + 2_000).toISOString(), { lat: 48.851, lon: 2.351, gps_valid: true }),
    ]);
    expect(sent.json.rejected).toEqual([]);
    f.clock.advance(5_000);
    const { worker, local } = await both();
    expect(worker).toEqual(local);
    const vp = await readFeed(f, 'vehicle-positions');
    expect(vp.message!.entity.map((e: any) => e.vehicle.vehicle.id)).toContain(vehicle);
    const tu = await readFeed(f, 'trip-updates');
    expect(tu.message!.entity.find((e: any) => e.tripUpdate.trip.tripId === 'T4')?.tripUpdate.trip.scheduleRelationship).toBe('CANCELED');
  });

  it('a worker thread that ends is started again at the next rebuild, the last snapshot served until then', async () => {
    await settled(f);
    const built = f.clock.now();
    // Stopped from outside (as a crash would end it): the cache's thread seam, not an API.
    const thread = (f.t.ctx.services.feeds as unknown as { thread: { worker: { terminate(): Promise<number> } | undefined } }).thread;
    const ended = thread.worker!;
    await ended.terminate();
    expect(thread.worker).toBeUndefined();
    f.clock.advance(5_000);
    const first = await readFeed(f, 'trip-updates');
    expect(first.message!.header.timestamp).toBe(built.getTime() / 1000);
    await settled(f);
    expect(thread.worker).toBeDefined();
    expect(thread.worker).not.toBe(ended);
    const { worker, local } = await both();
    expect(worker).toEqual(local);
  });

  it('a feed request is answered while the worker\'s rebuild waits for a lock another connection holds on a table it reads; once the rebuild is late, the positions are refreshed on their own', async () => {
    await settled(f);
    const built = f.clock.now();
    await f.t.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE trip_tracking IN ACCESS EXCLUSIVE MODE');
      f.clock.advance(5_000);
      const first = await readFeed(f, 'trip-updates');
      expect(first.message!.header.timestamp).toBe(built.getTime() / 1000);
      // The worker's rebuild is waiting for the lock.
      await eventually(async () => (await f.t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'trip_tracking'::regclass"))[0]!.n > 0, "the worker's rebuild waiting for the lock");
      expect(f.t.ctx.services.feeds.rebuilding(f.g)).toBe(true);
      const during = await Promise.all([readFeed(f, 'trip-updates'), readFeed(f, 'vehicle-positions')]);
      expect(during.map((r) => r.message!.header.timestamp)).toEqual([built.getTime() / 1000, built.getTime() / 1000]);
      const sm = await f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/stop-monitoring?MonitoringRef=S2` });
      expect(sm.statusCode).toBe(200);
      expect(sm.headers.age).toBe('5');
      // Under way for the refresh interval, the rebuild is late: the positions are read and their
      // outputs built on the worker on their own (no tracking read), the trips' feeds still wait.
      f.clock.advance(5_000);
      await readFeed(f, 'vehicle-positions');
      await eventually(async () => (await readFeed(f, 'vehicle-positions')).message!.header.timestamp === built.getTime() / 1000 + 10, 'VehiclePositions refreshed on the worker from the positions');
      expect((await readFeed(f, 'trip-updates')).message!.header.timestamp).toBe(built.getTime() / 1000);
      expect(f.t.ctx.services.feeds.rebuilding(f.g)).toBe(true);
    });
    await settled(f);
  });

  it("samples the published predictions on the worker thread, from the worker's snapshot, recording what the service thread records from its own", async () => {
    // T3 (08:30 local, 07:30Z) in progress: its vehicle left S1 at 07:31Z.
    const d = await newDevice(f.t, f.g);
    const sent = await send(f.t, f.g, d.auth, [
      item('trip_start', '2026-03-10T07:29:00Z', { trip_id: 'T3', service_date: '2026-03-10' }),
      item('trip_event', '2026-03-10T07:31:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'departure', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
    ]);
    expect(sent.json.rejected).toEqual([]);
    // Both apps serving a snapshot of the clock's time, read after the reports: each samples its own (predictions/samples.ts).
    await both();
    const now = f.clock.now();
    const rows = async () => {
      const r = await f.t.db.query(
        `SELECT trip_id, stop_sequence, sampled_minute, sampled_at, stop_id, route_id, predicted_arrival_at, predicted_departure_at, uncertainty_s, horizon_s, basis
         FROM prediction_samples WHERE group_id = $1 ORDER BY trip_id, stop_sequence`, [f.g]);
      await f.t.db.query('DELETE FROM prediction_sample_sets WHERE group_id = $1', [f.g]);
      return r;
    };
    // The asks the cache sends its worker (its thread seam, as above), watched.
    const thread = (f.t.ctx.services.feeds as unknown as { thread: { ask(a: { op: string }): Promise<unknown> } }).thread;
    const asked: string[] = [];
    const ask = thread.ask.bind(thread);
    thread.ask = (a) => (asked.push(a.op), ask(a));
    const onWorker = await samplePredictions(f.t.ctx, { now, groupId: f.g });
    thread.ask = ask;
    expect(asked).toContain('samples');
    const worker = await rows();
    const onService = await samplePredictions(here.ctx, { now, groupId: f.g });
    const service = await rows();
    // T3's stops ahead (S2, S3) at least, and the next trip of its block (T4).
    expect(onWorker).toBeGreaterThanOrEqual(2);
    expect(worker.map((r) => (r as { trip_id: string }).trip_id)).toContain('T3');
    expect([onWorker, worker]).toEqual([onService, service]);
  });

  it("closes within its time limit when the worker's database cannot close (a query waits for a lock held elsewhere): the thread is stopped, the ask under way refused, the stop logged", async () => {
    const errors: unknown[] = [];
    const thread = FeedThread.of({ ...testConfig(), feeds: { ...testConfig().feeds, worker: 'on' } }, f.t.db, (err) => errors.push(err), 300);
    await f.t.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE trip_tracking IN ACCESS EXCLUSIVE MODE');
      const asked = thread.ask({ op: 'rebuild', groupId: f.g, now: f.clock.now().getTime(), outputs: [], kept: [] });
      const refused = asked.then(() => 'answered', (err: Error) => err.message);
      await eventually(async () => (await f.t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'trip_tracking'::regclass"))[0]!.n > 0, "the worker's rebuild waiting for the lock");
      // The lock is still held: the worker's database cannot close, the thread is stopped.
      await thread.close();
      expect(await refused).toMatch(/worker thread ended/);
      expect(errors.map(String)).toEqual([expect.stringMatching(/did not close within 300 ms/)]);
      expect((thread as unknown as { worker: unknown }).worker).toBeUndefined();
    });
  });

  it('refuses an ask once closed, and starts no worker for it (a late ask would start a worker nothing closes)', async () => {
    const thread = FeedThread.of({ ...testConfig(), feeds: { ...testConfig().feeds, worker: 'on' } }, f.t.db, () => undefined);
    const sample = { op: 'samples', ask: { now: f.clock.now().getTime(), groupId: f.g, maxHorizonS: 3600, chunkRows: 1000 } } as const;
    // Asked once: its worker started and answered, its heap's young generation the one set for the service's worker threads.
    expect((await thread.ask(sample)).ok).toBe(true);
    expect((thread as unknown as { worker: Worker }).worker.resourceLimits?.maxYoungGenerationSizeMb).toBe(WORKER_YOUNG_GENERATION_MB);
    await thread.close();
    await expect(thread.ask(sample)).rejects.toThrow(/closed \(asked samples\)/);
    expect((thread as unknown as { worker: unknown }).worker).toBeUndefined();
  });
});
