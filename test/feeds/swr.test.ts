/**
 * Issue 16: the passenger feeds never wait for a rebuild and never drop a vehicle. A rebuild is
 * held in the middle (the feed cache's `pause` seam: after the trips are read, before the
 * vehicles are; on PostgreSQL also by a lock another connection holds on a table it reads) while
 * the test reads the feeds and devices report. No timing threshold: a request that waited for the
 * held rebuild would never answer, and the guard only turns that hang into a clear failure.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { create } from 'xmlbuilder2';
import { OUTPUT_IDLE_MS } from '../../src/domains/feeds/cache.js';
import type { NetworkHead, NetworkNow } from '../../src/domains/feeds/network.js';
import { siriTime } from '../../src/domains/feeds/siri/build.js';
import { engine } from '../helpers/db.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { eventually, feedFixture, putUpdate, readFeed, secs, settled, type FeedFixture } from './fixture.js';

let f: FeedFixture;
beforeAll(async () => {
  f = await feedFixture();
});
/** The release of the hold a test made: a failed test still lets its rebuild finish. */
let releaseHeld: (() => void) | undefined;
afterEach(() => releaseHeld?.());
afterAll(async () => f?.t.close());

/**
 * A rebuild hold the test controls, at the cache's seam `at` (`pause`: in the snapshot's read;
 * `pauseLast`: before each output built last, whose names are `held`): `reached` resolves when a
 * rebuild reaches it, `release` lets it go on.
 */
function holdRebuilds(at: 'pause' | 'pauseLast' = 'pause') {
  const cache = f.t.ctx.services.feeds;
  let entered!: () => void;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const held: string[] = [];
  cache[at] = async (_groupId: string, name?: string) => {
    held.push(name ?? 'snapshot');
    entered();
    await released;
  };
  releaseHeld = () => {
    cache[at] = undefined;
    release();
    releaseHeld = undefined;
  };
  return { reached, holds: () => held.length, held, release: releaseHeld };
}

/** Fails with a clear message, rather than hanging, if `p` waits for the held rebuild. */
async function answered<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} waited for the held rebuild`)), 20_000);
  });
  try {
    return await Promise.race([p, guard]);
  } finally {
    clearTimeout(timer);
  }
}

const vehicleIds = (m: any) => (m.entity ?? []).map((e: any) => e.vehicle.vehicle.id as string).sort();
const vehicleAt = (m: any, id: string) => (m.entity ?? []).find((e: any) => e.vehicle.vehicle.id === id)?.vehicle.timestamp as number | undefined;
const vmTimestamp = (body: string) => (create(body).end({ format: 'object' }) as any).Siri.ServiceDelivery.ResponseTimestamp as string;

async function newBus(): Promise<{ vehicle: string; report: (at: string) => Promise<void> }> {
  const d = await newDevice(f.t, f.g);
  const vehicle = await newVehicle(f.t, f.g);
  const driver = await newDriver(f.t, f.g);
  let signedOn = false;
  return {
    vehicle,
    report: async (at) => {
      const items = [...(signedOn ? [] : [item('sign_on', '2026-03-10T07:00:00Z', { driver_id: driver, vehicle_id: vehicle })]), item('position', at, { lat: 48.85, lon: 2.35, gps_valid: true })];
      signedOn = true;
      const r = await send(f.t, f.g, d.auth, items);
      expect(r.json.rejected).toEqual([]);
    },
  };
}

describe('stale-while-revalidate feeds (issue 16)', () => {
  it('a feed request is answered from the last snapshot while a rebuild is in progress, with its ETag, Last-Modified and age', async () => {
    const bus = await newBus();
    await bus.report('2026-03-10T07:34:00Z');
    await settled(f);
    const built = f.clock.now();
    const before = await readFeed(f, 'vehicle-positions');
    const alertsBefore = await readFeed(f, 'alerts');
    expect(vehicleIds(before.message)).toContain(bus.vehicle);

    // The data change and the clock moves past the refresh interval; the next rebuild is held.
    const hold = holdRebuilds();
    expect((await putUpdate(f, { update_id: 'swr-msg', kind: 'message', route_id: 'R1', start_date: '2026-03-10', end_date: '2026-03-10', message: { header: 'Held', severity: 'info' } })).status).toBe(200);
    await bus.report('2026-03-10T07:34:30Z');
    f.clock.advance(5_000);
    const first = await answered(readFeed(f, 'vehicle-positions'), 'the request that starts the rebuild');
    await hold.reached;

    // Every feed answers from the last snapshot while the rebuild is held.
    const during = await answered(Promise.all([
      readFeed(f, 'vehicle-positions'), readFeed(f, 'trip-updates'), readFeed(f, 'alerts'),
      readFeed(f, 'vehicle-positions', { 'if-none-match': before.headers.etag as string }),
      readFeed(f, 'alerts', { 'if-modified-since': alertsBefore.headers['last-modified'] as string }),
      f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/vehicle-monitoring` }),
      f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/situation-exchange` }),
      f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/stop-monitoring?MonitoringRef=S1` }),
    ]), 'a feed request');
    const [vp, tu, alerts, vp304, alerts304, vm, sx, sm] = during;
    for (const r of [first, vp, tu, alerts]) {
      expect(r.status).toBe(200);
      expect(r.message!.header.timestamp).toBe(built.getTime() / 1000);
      expect(r.headers.age).toBe('5');
    }
    expect(vp.headers.etag).toBe(before.headers.etag);
    expect(vp.headers['last-modified']).toBe(before.headers['last-modified']);
    expect(vehicleAt(vp.message, bus.vehicle)).toBe(secs('2026-03-10T07:34:00Z'));
    expect((alerts.message!.entity ?? []).map((e: any) => e.id)).not.toContain('alert:swr-msg');
    expect([vp304.status, alerts304.status]).toEqual([304, 304]);
    for (const r of [vm, sx, sm]) {
      expect(r.statusCode).toBe(200);
      expect(vmTimestamp(r.body)).toBe('2026-03-10T08:35:00+01:00');
      expect(r.headers.age).toBe('5');
    }
    // One rebuild for the group, shared by every feed, however many requests found it stale.
    expect(hold.holds()).toBe(1);

    hold.release();
    await settled(f);
    const after = await readFeed(f, 'vehicle-positions', { 'if-none-match': before.headers.etag as string });
    expect(after.status).toBe(200);
    expect(after.headers.age).toBe('0');
    expect(after.headers['last-modified']).toBe(f.clock.now().toUTCString());
    expect(vehicleAt(after.message, bus.vehicle)).toBe(secs('2026-03-10T07:34:30Z'));
    const alertsAfter = await readFeed(f, 'alerts', { 'if-none-match': alertsBefore.headers.etag as string });
    expect(alertsAfter.status).toBe(200);
    expect(alertsAfter.message!.entity.map((e: any) => e.id)).toContain('alert:swr-msg');
    // An unchanged output keeps its ETag and Last-Modified across rebuilds.
    f.clock.advance(5_000);
    await settled(f);
    const again = await readFeed(f, 'alerts', { 'if-none-match': alertsAfter.headers.etag as string });
    expect(again.status).toBe(304);
    expect(again.headers['last-modified']).toBe(alertsAfter.headers['last-modified']);
  });

  it('a vehicle that reports while a snapshot is read is not dropped from it, and is in the next one with its new position (regression: left out of that snapshot)', async () => {
    const bus = await newBus();
    const newcomer = await newBus();
    // The bus reported 10 s before the rebuild that will be held; a snapshot with it is served.
    f.clock.advance(5_000);
    const start = f.clock.now().getTime() + 5_000;
    const at = (s: number) => new Date(start + s * 1000).toISOString();
    await bus.report(at(-10));
    await settled(f);
    const seen: any[] = [(await readFeed(f, 'vehicle-positions')).message];
    expect(vehicleAt(seen[0], bus.vehicle)).toBe(Date.parse(at(-10)) / 1000);

    // The rebuild at `start` is held after the trips are read, before the vehicles are: the bus
    // reports a position dated after the rebuild's time, and a vehicle reports for the first time.
    const hold = holdRebuilds();
    f.clock.advance(5_000);
    seen.push((await answered(readFeed(f, 'vehicle-positions'), 'the request that starts the rebuild')).message);
    await hold.reached;
    await bus.report(at(2));
    await newcomer.report(at(1));
    seen.push((await answered(readFeed(f, 'vehicle-positions'), 'a request during the rebuild')).message);
    hold.release();
    await settled(f);
    const held = (await readFeed(f, 'vehicle-positions')).message;
    seen.push(held);
    // The snapshot of `start`: the bus with its latest position at or before then; the newcomer
    // had none, so it waits for the next snapshot (no entity is newer than the header).
    expect(held!.header.timestamp).toBe(start / 1000);
    expect(vehicleAt(held, bus.vehicle)).toBe(Date.parse(at(-10)) / 1000);
    expect(vehicleAt(held, newcomer.vehicle)).toBeUndefined();

    f.clock.advance(5_000);
    await settled(f);
    const next = (await readFeed(f, 'vehicle-positions')).message;
    seen.push(next);
    expect(vehicleAt(next, bus.vehicle)).toBe(Date.parse(at(2)) / 1000);
    expect(vehicleAt(next, newcomer.vehicle)).toBe(Date.parse(at(1)) / 1000);
    // The bus is in every snapshot read along the way.
    for (const m of seen) expect(vehicleIds(m)).toContain(bus.vehicle);
    // And so in SIRI VehicleMonitoring, built from the same snapshot.
    const vm = await f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/vehicle-monitoring?VehicleRef=${newcomer.vehicle}` });
    expect(vm.body).toContain(`<VehicleRef>${newcomer.vehicle}</VehicleRef>`);
  });

  it('while a rebuild is late (under way for a refresh interval), the vehicles\' positions are refreshed on their own, the trips\' feeds served from the last snapshot; no output goes back to an older snapshot', async () => {
    const bus = await newBus();
    f.clock.advance(5_000);
    await bus.report(new Date(f.clock.now().getTime() - 1_000).toISOString());
    await settled(f);
    const built = f.clock.now().getTime();
    const at = (ms: number) => (built + ms) / 1000;
    const vm = () => f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/vehicle-monitoring` });
    await vm();

    const hold = holdRebuilds();
    f.clock.advance(5_000);
    await answered(readFeed(f, 'vehicle-positions'), 'the request that starts the rebuild');
    await hold.reached;
    await bus.report(new Date(built + 6_000).toISOString());
    // Under way for 4 s: not late, the positions wait with the rest.
    f.clock.advance(4_000);
    expect((await answered(readFeed(f, 'vehicle-positions'), 'a request 4 s into the rebuild')).message!.header.timestamp).toBe(at(0));
    expect(hold.holds()).toBe(1);
    // Under way for the refresh interval (5 s): late.
    f.clock.advance(1_000);
    await answered(readFeed(f, 'vehicle-positions'), 'the request that finds the rebuild late');
    await eventually(async () => (await readFeed(f, 'vehicle-positions')).message!.header.timestamp === at(10_000), 'VehiclePositions refreshed from the positions');
    const vp = await readFeed(f, 'vehicle-positions');
    expect(vehicleAt(vp.message, bus.vehicle)).toBe(at(6_000));
    expect(vp.headers.age).toBe('0');
    await eventually(async () => vmTimestamp((await vm()).body) === siriTime(new Date(built + 10_000), 'Europe/Paris'), 'VehicleMonitoring refreshed from the positions');
    expect((await vm()).headers.age).toBe('0');
    // The trips' feeds wait for the rebuild: the last snapshot, 10 s old; the rebuild still held, no second one.
    const tu = await readFeed(f, 'trip-updates');
    expect([tu.message!.header.timestamp, tu.headers.age]).toEqual([at(0), '10']);
    expect([f.t.ctx.services.feeds.rebuilding(f.g), hold.holds()]).toEqual([true, 1]);

    // The held rebuild (of 5 s in) ends: its snapshot is the group's, and the positions refreshed after it stay.
    hold.release();
    await f.t.ctx.services.feeds.idle();
    const cache = f.t.ctx.services.feeds;
    expect((await cache.snapshot(f.g)).now.getTime()).toBe(built + 5_000);
    const kept = await readFeed(f, 'vehicle-positions');
    expect([kept.message!.header.timestamp, vehicleAt(kept.message, bus.vehicle)]).toEqual([at(10_000), at(6_000)]);
    expect(vmTimestamp((await vm()).body)).toBe(siriTime(new Date(built + 10_000), 'Europe/Paris'));
    await settled(f);
  });

  it('a rebuild builds each output once, however often it is asked for meanwhile (regression: a rebuild that never ended under load)', async () => {
    const cache = f.t.ctx.services.feeds;
    await settled(f);
    const before = await cache.snapshot(f.g);
    const builds = new Map<NetworkHead, number>();
    let asked = 0;
    const recipe = (net: NetworkNow) => {
      builds.set(net, (builds.get(net) ?? 0) + 1);
      // While the rebuild builds it, a request for the same output (it moves the name to the end
      // of the outputs asked for).
      if (net !== before && ++asked < 50) void cache.outputOf(f.g, 'test/asked-again', recipe);
      return { contentType: 'text/plain', body: Buffer.from('same'), fingerprint: 'same' };
    };
    await cache.outputOf(f.g, 'test/asked-again', recipe);
    f.clock.advance(5_000);
    await settled(f);
    const after = await cache.snapshot(f.g);
    expect(after).not.toBe(before);
    expect(builds.get(after)).toBe(1);
  });

  it('an output no longer asked for is not rebuilt with each snapshot once idle for OUTPUT_IDLE_MS, and is built on request when asked again (regression: one request had it rebuilt until the service stopped)', async () => {
    const cache = f.t.ctx.services.feeds;
    const builds: NetworkHead[] = [];
    const recipe = (net: NetworkNow) => {
      builds.push(net);
      return { contentType: 'text/plain', body: Buffer.from('idle'), fingerprint: 'idle' };
    };
    await settled(f);
    await cache.outputOf(f.g, 'test/idle', recipe);
    expect(builds).toHaveLength(1);
    // Still asked for lately: rebuilt with the next snapshot, which another feed's request starts.
    f.clock.advance(5_000);
    await readFeed(f, 'trip-updates');
    await settled(f);
    expect(builds).toHaveLength(2);
    expect(builds[1]).toBe(await cache.snapshot(f.g));
    // Not asked for since: the next rebuilds leave it out.
    f.clock.advance(OUTPUT_IDLE_MS);
    await readFeed(f, 'trip-updates');
    await settled(f);
    f.clock.advance(5_000);
    await readFeed(f, 'trip-updates');
    await settled(f);
    expect(builds).toHaveLength(2);
    // Asked for again: built now, from the current snapshot, then with each snapshot again.
    const current = await cache.snapshot(f.g);
    await cache.outputOf(f.g, 'test/idle', recipe);
    expect(builds).toHaveLength(3);
    expect(builds[2]).toBe(current);
    f.clock.advance(5_000);
    await readFeed(f, 'trip-updates');
    await settled(f);
    expect(builds).toHaveLength(4);
  });

  it('the timetable is built after the snapshot is served: meanwhile the positions and trip-updates are the new snapshot\'s, the timetable request is answered at once with the one before, built once', async () => {
    const cache = f.t.ctx.services.feeds;
    const et = () => f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/estimated-timetable` });
    const bus = await newBus();
    await settled(f);
    const before = f.clock.now();
    expect((await et()).statusCode).toBe(200);
    await readFeed(f, 'trip-updates');
    const { reached, held, release } = holdRebuilds('pauseLast');
    f.clock.advance(5_000);
    const now = f.clock.now();
    await bus.report(now.toISOString());
    await readFeed(f, 'alerts');
    await answered(reached, 'the rebuild reaching the timetable');
    expect(held).toEqual(['siri/et?']);
    const [positions, trips, timetable] = await answered(Promise.all([readFeed(f, 'vehicle-positions'), readFeed(f, 'trip-updates'), et()]), 'a feed request');
    expect([positions.message!.header.timestamp, trips.message!.header.timestamp]).toEqual([secs(now.toISOString()), secs(now.toISOString())]);
    expect(vehicleAt(positions.message, bus.vehicle)).toBe(secs(now.toISOString()));
    expect([timetable.statusCode, vmTimestamp(timetable.body), timetable.headers.age]).toEqual([200, siriTime(before, 'Europe/Paris'), '5']);
    expect(cache.rebuilding(f.g)).toBe(true);
    release();
    await settled(f);
    expect(vmTimestamp((await et()).body)).toBe(siriTime(now, 'Europe/Paris'));
    expect(held).toEqual(['siri/et?']);
  });

  it("/metrics tells what each rebuild's parts took: a timetable build held 300 ms is in the rebuild's `last` part and its total, not in the time to serve its snapshot", async () => {
    const metric = async () => {
      const text = (await f.t.app.inject({ url: '/metrics' })).body;
      const of = (part: string, what: 'sum' | 'count') => Number(new RegExp(`^transit_ops_feed_rebuild_seconds_${what}\\{part="${part}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
      return Object.fromEntries(['snapshot', 'outputs', 'served', 'last', 'total', 'idle'].map((p) => [p, { sum: of(p, 'sum'), count: of(p, 'count') }]));
    };
    const et = () => f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/estimated-timetable` });
    await settled(f);
    expect((await et()).statusCode).toBe(200);
    await settled(f);
    const before = await metric();
    const { reached, release } = holdRebuilds('pauseLast');
    f.clock.advance(5_000);
    await readFeed(f, 'trip-updates');
    await answered(reached, 'the rebuild reaching the timetable');
    const heldFrom = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const held = (performance.now() - heldFrom) / 1000;
    release();
    await settled(f);
    const after = await metric();
    const d = (part: string) => ({ sum: after[part]!.sum - before[part]!.sum, count: after[part]!.count - before[part]!.count });
    for (const part of ['snapshot', 'outputs', 'served', 'last', 'total', 'idle']) expect(d(part).count, part).toBe(1);
    expect(d('last').sum).toBeGreaterThanOrEqual(held);
    expect(d('served').sum).toBeLessThan(d('total').sum - held + 1e-6);
    expect(d('total').sum).toBeCloseTo(d('served').sum + d('last').sum, 6);
    expect(d('served').sum).toBeGreaterThanOrEqual(d('snapshot').sum);
    expect(d('snapshot').sum).toBeGreaterThan(0);
  });

  it.runIf(engine === 'postgres')('a feed request is answered while the rebuild waits for a lock another connection holds on a table it reads', async () => {
    await settled(f);
    const built = f.clock.now();
    const before = await readFeed(f, 'trip-updates');
    await f.t.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE trip_tracking IN ACCESS EXCLUSIVE MODE');
      f.clock.advance(5_000);
      const first = await answered(readFeed(f, 'trip-updates'), 'the request that starts the rebuild');
      expect(first.message!.header.timestamp).toBe(built.getTime() / 1000);
      // The rebuild is waiting for the lock.
      await eventually(async () => (await f.t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'trip_tracking'::regclass"))[0]!.n > 0, 'the rebuild waiting for the lock');
      const during = await answered(Promise.all([readFeed(f, 'trip-updates'), readFeed(f, 'vehicle-positions'), readFeed(f, 'trip-updates', { 'if-none-match': before.headers.etag as string })]), 'a feed request');
      expect(during.slice(0, 2).map((r) => r.message!.header.timestamp)).toEqual([built.getTime() / 1000, built.getTime() / 1000]);
      expect(during[2].status).toBe(304);
    });
    await settled(f);
  });
});

// On the feeds' worker thread too (PostgreSQL), which keeps the timetable's pieces between its builds.
describe.each(engine === 'postgres' ? (['off', 'on'] as const) : (['off'] as const))('the timetable on a cadence of its own (FEEDS_ET_REFRESH_SECONDS), FEEDS_WORKER=%s', (worker) => {
  let g: FeedFixture;
  beforeAll(async () => {
    g = await feedFixture({ config: { feeds: { refreshSeconds: 5, staleVehicleSeconds: 300, etHorizonMinutes: 60, etRefreshSeconds: 30, keepFresh: false, worker } } });
  });
  afterAll(async () => g?.t.close());

  it('30 s: the timetable is rebuilt with the first snapshot read 30 s or more after the one it was built from, and served meanwhile with its own time and age while trip-updates follow every snapshot; that build reuses the trips\' pieces of the one before (regression: the worker let them go at the rebuilds that did not build it)', async () => {
    const cache = g.t.ctx.services.feeds;
    const et = () => g.t.app.inject({ url: `/api/v4/groups/${g.g}/siri/estimated-timetable` });
    await settled(g);
    const first = g.clock.now();
    expect(vmTimestamp((await et()).body)).toBe(siriTime(first, 'Europe/Paris'));
    const cold = (await cache.output(g.g, { kind: 'siri-et' })).pieces!;
    expect(cold.reused).toBe(0);
    expect(cold.made).toBeGreaterThan(0);
    for (const after of [5, 10, 15, 20, 25]) {
      g.clock.advance(5_000);
      await settled(g);
      expect((await readFeed(g, 'trip-updates')).message!.header.timestamp).toBe(g.clock.now().getTime() / 1000);
      const served = await et();
      expect([vmTimestamp(served.body), served.headers.age], `${after} s after`).toEqual([siriTime(first, 'Europe/Paris'), String(after)]);
    }
    g.clock.advance(5_000);
    await settled(g);
    expect(vmTimestamp((await et()).body)).toBe(siriTime(g.clock.now(), 'Europe/Paris'));
    // Nothing reported: every journey told as 30 s before, none compressed again (the document's head and tail are: its timestamps).
    expect((await cache.output(g.g, { kind: 'siri-et' })).pieces).toEqual({ made: 0, reused: cold.made, deflated: 2 });
  });
});
