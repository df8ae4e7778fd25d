/**
 * The network the feed tests share: one route, four trips on Tuesday 2026-03-10 (Europe/Paris),
 * a clock at 08:35 local (07:35Z), and helpers to read the feeds decoded with the bindings.
 */
import GtfsRealtimeBindings from 'gtfs-realtime-bindings';
import type { Config } from '../../src/config.js';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

export const rt = GtfsRealtimeBindings.transit_realtime;

export const STOPS = 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.85,2.35\nS2,Second,48.86,2.36\nS3,Third,48.87,2.37\nS4,Fourth,48.88,2.38\n';
export const TRIPS = 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id,shape_id\nR1,WK,T1,Third,0,B1,\nR1,WK,T2,Fourth,0,B1,SH1\nR1,WK,T3,Third,0,B2,\nR1,WK,T4,Third,0,B2,\n';
export const STOP_TIMES = [
  'trip_id,arrival_time,departure_time,stop_id,stop_sequence',
  'T1,08:00:00,08:00:00,S1,1', 'T1,08:10:00,08:11:00,S2,2', 'T1,08:20:00,08:20:00,S3,3',
  'T2,09:00:00,09:00:00,S1,1', 'T2,09:10:00,09:11:00,S2,2', 'T2,09:20:00,09:20:00,S3,3', 'T2,09:30:00,09:30:00,S4,4',
  'T3,08:30:00,08:30:00,S1,1', 'T3,08:40:00,08:41:00,S2,2', 'T3,08:50:00,08:50:00,S3,3',
  'T4,10:00:00,10:00:00,S1,1', 'T4,10:10:00,10:11:00,S2,2', 'T4,10:20:00,10:20:00,S3,3',
].join('\n') + '\n';
export const SHAPES = 'shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\nSH1,48.85,2.35,1\nSH1,48.86,2.36,2\nSH1,48.87,2.37,3\nSH1,48.88,2.38,4\n';

export interface FeedFixture {
  t: TestApp;
  g: string;
  op: TestUser;
  clock: ReturnType<typeof fixedClock>;
}

export async function feedFixture(o: { config?: Partial<Config> } = {}): Promise<FeedFixture> {
  const clock = fixedClock('2026-03-10T07:35:00Z');
  const t = await setup({ clock, ...(o.config ? { config: o.config } : {}) });
  const g = await newGroup(t);
  const op = await newUser(t, { groupId: g, role: 'operator' });
  await importZip(t, g, minimalZip({ 'stops.txt': STOPS, 'trips.txt': TRIPS, 'stop_times.txt': STOP_TIMES, 'shapes.txt': SHAPES }), { publish: true });
  return { t, g, op, clock };
}

export const putUpdate = (f: FeedFixture, body: object) => inject(f.t, { method: 'PUT', url: `/api/v4/groups/${f.g}/trip-updates`, headers: f.op.auth, payload: body });

/** A feed as the bindings decode it, and the answer's headers. */
export async function readFeed(f: FeedFixture, feed: string, headers: Record<string, string> = {}) {
  const res = await f.t.app.inject({ url: `/api/v4/groups/${f.g}/gtfs-rt/${feed}`, headers });
  return {
    status: res.statusCode,
    headers: res.headers,
    message: res.statusCode === 200 ? rt.FeedMessage.toObject(rt.FeedMessage.decode(res.rawPayload), { enums: String, longs: Number }) : null,
  };
}

export const secs = (iso: string) => Date.parse(iso) / 1000;

/** Polls `ok` until it holds (a deadline, never a timer race: the machine may be loaded). */
export async function eventually(ok: () => Promise<boolean>, what = 'the condition', timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Waits until the feeds answer from a snapshot built at the clock's time, every output of it
 * built. Stale-while-revalidate: the request that finds the snapshot stale is answered from it
 * and starts the rebuild; this waits for that rebuild, to its end (the SIRI EstimatedTimetable is
 * built after the snapshot is served with the others: cache.ts).
 */
export async function settled(f: FeedFixture): Promise<void> {
  const at = Math.floor(f.clock.now().getTime() / 1000);
  await eventually(
    async () => (await readFeed(f, 'alerts')).message!.header.timestamp === at && !f.t.ctx.services.feeds.rebuilding(f.g),
    `a snapshot built at ${f.clock.now().toISOString()}, every output of it`,
  );
}
