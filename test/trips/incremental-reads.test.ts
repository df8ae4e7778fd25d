/**
 * A tracking round reads only the reports that came since its trip's last round (tracking/round.ts,
 * incremental reads): the reports already read are held per database handle, and the dirty mark
 * says from when the new ones are (`since`). What is stored must be what a round from nothing
 * stores, whatever order the reports arrive in, and a round of another instance in between (which
 * read reports this one never saw) must make this one read everything again.
 *
 * The truth: a bus driving north along a straight 2.224 km shape (0.02° at 48.85°N) at 0.001° a
 * minute (111.2 m/min), a position every 15 s, from S1 at 07:00:30Z; it is on S2 (0.010°) at
 * 07:10:30 and on S3 at 07:20:30.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshDirty, recomputeTrip } from '../../src/domains/trips/tracking.js';
import { markTrips } from '../../src/domains/trips/queries/tracking.js';
import { insertReports, type ReportItems } from '../../src/domains/device/queries/reports.js';
import type { Db } from '../../src/platform/db/index.js';
import { Kept } from '../../src/platform/db/kept.js';
import { newGroup, setup, type TestApp } from '../helpers/app.js';
import { item, newDevice } from '../helpers/actual.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

const DATE = '2026-03-02'; // a Monday, Europe/Paris at +01:00: 08:00 local = 07:00Z
const FEED = {
  'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.850,2.35\nS2,Second,48.860,2.35\nS3,Third,48.870,2.35\n',
  'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id,shape_id\nR1,WK,T1,Third,0,B1,SH1\nR1,WK,T2,Third,0,B2,SH1\n',
  'shapes.txt': 'shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\nSH1,48.850,2.35,1\nSH1,48.870,2.35,2\n',
  'stop_times.txt': [
    'trip_id,arrival_time,departure_time,stop_id,stop_sequence',
    'T1,08:00:00,08:00:00,S1,1', 'T1,08:10:00,08:11:00,S2,2', 'T1,08:20:00,08:20:00,S3,3',
    'T2,08:00:00,08:00:00,S1,1', 'T2,08:10:00,08:11:00,S2,2', 'T2,08:20:00,08:20:00,S3,3',
  ].join('\n') + '\n',
};
const ref = (trip: string) => ({ trip_id: trip, service_date: DATE });
const START = Date.parse(`${DATE}T07:00:30Z`);
/** The bus's position k × 15 s after 07:00:30 (at, optionally with microseconds the Date cannot hold). */
const fix = (trip: string, k: number, micro = '') => {
  const at = new Date(START + k * 15_000).toISOString().replace('Z', `${micro}Z`);
  return item('position', at, { lat: 48.85 + 0.00025 * k, lon: 2.35, gps_valid: true, ...ref(trip) });
};
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

let t: TestApp;
let g: string;
let device: string;

beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  await importZip(t, g, minimalZip(FEED), { publish: true });
  device = (await newDevice(t, g)).deviceId;
  // The app's own worker would recompute the marked trips on its handle in between (a third instance): stopped.
  await t.ctx.services.tracking.close();
});
afterAll(async () => t?.close());

/**
 * Another instance on the same database: its own kept memos (Db.kept), the same connections. It
 * counts the report rows its rounds read (the four statements of selectRecorded).
 */
function instance(db: Db): { db: Db; read: () => number } {
  let rows = 0;
  const query = async (text: string, params?: unknown[]) => {
    const out = await db.query(text, params);
    if (text.includes('AS k(d, t, f)')) rows += out.length;
    return out;
  };
  const view = Object.create(db, { kept: { value: new Kept() }, query: { value: query } }) as Db;
  return { db: view, read: () => { const n = rows; rows = 0; return n; } };
}

/** Stores a batch as device ingest does (the reports and their trips' marks, one statement), without the refresh after it. */
async function store(items: ReturnType<typeof item>[]): Promise<void> {
  const r: ReportItems = { runs: [], events: [], positions: [], counts: [], movements: [] };
  for (const x of items) {
    if (x.type === 'position') r.positions.push({ item: x as never });
    else if (x.type === 'trip_event') r.events.push({ item: x as never });
    else if (x.type === 'trip_start' || x.type === 'trip_end') r.runs.push({ type: x.type, at: new Date(x.at), item: x as never });
  }
  await t.ctx.services.partitions.ensure(r.positions.map((p) => ({ table: 'positions' as const, at: new Date(p.item.at) })));
  await insertReports(t.db, markTrips, g, device, r, new Date());
}

/** The trip's stored tracking, bar when and by which write it was computed (computed_at, written). */
async function stored(trip: string) {
  const [summary] = await t.db.query<Record<string, unknown>>('SELECT * FROM trip_tracking WHERE group_id = $1 AND service_date = $2 AND trip_id = $3', [g, DATE, trip]);
  delete summary!['computed_at'];
  delete summary!['written'];
  const stops = await t.db.query<Record<string, unknown>>('SELECT * FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2 AND trip_id = $3 ORDER BY stop_sequence', [g, DATE, trip]);
  for (const s of stops) delete s['written'];
  return { summary: summary!, stops };
}

/** What a round from nothing stores (a fresh instance: nothing held). */
async function fromNothing(trip: string) {
  await recomputeTrip(instance(t.db).db, g, DATE, trip);
  return stored(trip);
}

describe('incremental tracking reads', () => {
  it('reads only what came since, and stores what a round from nothing stores (late backlog, microseconds, a retry; S2 passed 07:10:30-07:10:50, 2.224 km ±30 m)', async () => {
    const a = instance(t.db);
    const round = async () => {
      await refreshDirty(a.db, { groupId: g });
      return a.read();
    };
    // Before the trip: its start and the first 12 fixes but 4 to 7 (a minute offline).
    const early = [item('trip_start', `${DATE}T06:59:00Z`, ref('T1')), ...range(0, 11).filter((k) => k < 4 || k > 7).map((k) => fix('T1', k))];
    await store(early);
    expect(await round()).toBe(early.length); // the first round reads everything
    // The next minutes: only they are read.
    const next = range(12, 30).map((k) => fix('T1', k));
    await store(next);
    expect(await round()).toBe(next.length);
    // The offline minute arrives late, in the middle of the track, to the microsecond; with a retry of a stored fix.
    const backlog = range(4, 7).map((k) => fix('T1', k, '250'));
    await store([...backlog, next[0]!]);
    // From the earliest of the backlog on: the backlog, the fixes after it, and those of `next`.
    expect(await round()).toBe(backlog.length + range(8, 11).length + next.length);
    const rest = range(31, 80).map((k) => fix('T1', k));
    await store(rest);
    expect(await round()).toBe(rest.length);

    const incremental = await stored('T1');
    const s2 = incremental.stops.find((s) => (s as { stop_id: string }).stop_id === 'S2') as { actual_at: Date };
    expect(s2.actual_at.getTime()).toBeGreaterThanOrEqual(Date.parse(`${DATE}T07:10:30Z`));
    expect(s2.actual_at.getTime()).toBeLessThanOrEqual(Date.parse(`${DATE}T07:10:50Z`));
    expect(Math.abs(Number(incremental.summary['vk']) - 2.224)).toBeLessThanOrEqual(0.03);
    expect(incremental.summary['positions']).toBe(81);
    expect(await fromNothing('T1')).toEqual(incremental);
  });

  it("reads everything again after another instance's round (which read reports this one never saw)", async () => {
    const a = instance(t.db);
    const b = instance(t.db);
    const first = [item('trip_start', `${DATE}T06:59:00Z`, ref('T2')), ...range(0, 20).map((k) => fix('T2', k))];
    await store(first);
    await refreshDirty(a.db, { groupId: g });
    expect(a.read()).toBe(first.length);
    // Another instance recomputes after the next reports, and clears their mark.
    const second = range(21, 40).map((k) => fix('T2', k));
    await store(second);
    await refreshDirty(b.db, { groupId: g });
    expect(b.read()).toBe(first.length + second.length);
    // This instance's next round must not take its held reports for all but the newest.
    const third = range(41, 60).map((k) => fix('T2', k));
    await store(third);
    await refreshDirty(a.db, { groupId: g });
    expect(a.read()).toBe(first.length + second.length + third.length);
    const stored61 = await stored('T2');
    expect(stored61.summary['positions']).toBe(61);
    expect(await fromNothing('T2')).toEqual(stored61);
  });
});
