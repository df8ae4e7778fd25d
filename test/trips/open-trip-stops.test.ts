/**
 * The open trips' tracking as the feeds read it each refresh (trackingOf with `open`): the stop
 * rows of a trip written since the last read are read again, alone (OpenTripStops, by
 * trip_tracking.written), a row that reads as before is the one read before, a trip whose stops
 * changed since (rows deleted or added) is read whole, and a late report is in the next read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenTripStops, recomputeTrip, trackingOf } from '../../src/domains/trips/tracking.js';
import { selectStops, selectStopsWritten, selectSummaries } from '../../src/domains/trips/queries/tracking.js';
import type { Queryable } from '../../src/platform/db/index.js';
import { sqlLiteral } from '../../src/platform/db/types.js';
import { newGroup, setup, type TestApp } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

const DATE = '2026-03-02'; // a Monday, Europe/Paris at +01:00: 08:00 local = 07:00Z
const FEED = {
  'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.850,2.35\nS2,Second,48.860,2.35\nS3,Third,48.870,2.35\n',
  'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id\nR1,WK,T1,Third,0,B1\nR1,WK,T2,Third,0,B2\n',
  'stop_times.txt': [
    'trip_id,arrival_time,departure_time,stop_id,stop_sequence',
    'T1,08:00:00,08:00:00,S1,1', 'T1,08:10:00,08:11:00,S2,2', 'T1,08:20:00,08:20:00,S3,3',
    'T2,08:00:00,08:00:00,S1,1', 'T2,08:10:00,08:11:00,S2,2', 'T2,08:20:00,08:20:00,S3,3',
  ].join('\n') + '\n',
};
const at = (hhmmss: string) => new Date(`${DATE}T${hhmmss}Z`).toISOString();
const ref = (trip: string) => ({ trip_id: trip, service_date: DATE });

let t: TestApp;
let g: string;
const devices: Awaited<ReturnType<typeof newDevice>>[] = [];

beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  await importZip(t, g, minimalZip(FEED), { publish: true });
  for (const trip of ['T1', 'T2']) {
    const dev = await newDevice(t, g);
    devices.push(dev);
    const [bus, driver] = [await newVehicle(t, g), await newDriver(t, g)];
    expect((await send(t, g, dev.auth, [
      item('sign_on', at('06:50:00'), { driver_id: driver, vehicle_id: bus }),
      item('trip_start', at('06:59:00'), ref(trip)),
      item('trip_event', at('07:01:00'), { ...ref(trip), event: 'departure', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
    ])).json.complete).toBe(true);
  }
});
afterAll(async () => t?.close());

const passed = async (now: Date) =>
  Object.fromEntries((await trackingOf(t.db, g, DATE, undefined, { now, open: true })).map((x) => [x.trip_id, x.stops.map((s) => s.status)]));

describe('the open trips read each refresh', () => {
  it('read again: a trip recomputed since has its new stops, the others the rows already read', async () => {
    const now = new Date(at('07:05:00'));
    expect(await passed(now)).toEqual({ T1: ['passed', 'pending', 'pending'], T2: ['passed', 'pending', 'pending'] });
    const kept = t.db.kept.of(OpenTripStops);
    const summaries = await selectSummaries(t.db, g, DATE, null, true, new Date(0));
    const rowsOf = async () => {
      const rows = await kept.read(t.db, g, DATE, summaries);
      return (trip: string) => rows.filter((r) => r.trip_id === trip);
    };
    const first = await rowsOf();
    const again = await rowsOf();
    for (const trip of ['T1', 'T2']) {
      expect(again(trip)).toHaveLength(3);
      again(trip).forEach((r, i) => expect(r).toBe(first(trip)[i]));
    }

    // T1 passes S2 (a report, its trip recomputed by the read): in the next read; T2's rows are those read before.
    await send(t, g, devices[0]!.auth, [item('trip_event', at('07:11:00'), { ...ref('T1'), event: 'departure', stop_id: 'S2', stop_sequence: 2, gps_valid: true })]);
    const later = new Date(at('07:12:00'));
    expect(await passed(later)).toEqual({ T1: ['passed', 'passed', 'pending'], T2: ['passed', 'pending', 'pending'] });
    const fresh = await selectSummaries(t.db, g, DATE, null, true, new Date(0));
    // The round stamped the row it changed, alone, with the trip's new write: what the read asks for.
    const t1Written = summaries.find((x) => x.trip_id === 'T1')!.written;
    expect(fresh.find((x) => x.trip_id === 'T1')!.written).toBeGreaterThan(t1Written);
    expect((await selectStopsWritten(t.db, g, DATE, [{ trip_id: 'T1', written: t1Written }])).map((r) => r.stop_sequence)).toEqual([2]);
    const rows = await kept.read(t.db, g, DATE, fresh);
    const t1 = rows.filter((r) => r.trip_id === 'T1');
    expect(t1.map((r) => r.actual_at?.toISOString() ?? null)).toEqual([at('07:01:00'), at('07:11:00'), null]);
    rows.filter((r) => r.trip_id === 'T2').forEach((r, i) => expect(r).toBe(first('T2')[i]));
    // Of the recomputed T1, the rows that read the same (S1 passed before, S3 still ahead) are those
    // read before; the row of S2, passed since, is the new one.
    expect(t1[0]).toBe(first('T1')[0]);
    expect(t1[2]).toBe(first('T1')[2]);
    expect(t1[1]).not.toBe(first('T1')[1]);
  });

  it("tells a recomputed trip's unchanged stops as before (the same objects), a stop passed since anew", async () => {
    const stopsOf = async (now: Date) => (await trackingOf(t.db, g, DATE, undefined, { now, open: true })).find((x) => x.trip_id === 'T1')!.stops;
    const before = await stopsOf(new Date(at('07:13:00')));
    await send(t, g, devices[0]!.auth, [item('trip_event', at('07:13:30'), { ...ref('T1'), event: 'arrival', stop_id: 'S3', stop_sequence: 3, gps_valid: true })]);
    const after = await stopsOf(new Date(at('07:14:00')));
    expect(after.map((s) => s.status)).toEqual(['passed', 'passed', 'passed']);
    expect(after[0]).toBe(before[0]);
    expect(after[1]).toBe(before[1]);
    expect(after[2]).not.toBe(before[2]);
    expect(after[2]!.actual_at).toBe(at('07:13:30'));
  });

  it('reads a trip whole when rows of it were deleted since (its stops changed: told by their count)', async () => {
    const kept = t.db.kept.of(OpenTripStops);
    const read = async () => (await kept.read(t.db, g, DATE, await selectSummaries(t.db, g, DATE, null, true, new Date(0)))).filter((r) => r.trip_id === 'T2').map((r) => r.stop_sequence);
    expect(await read()).toEqual([1, 2, 3]);
    // What a round writes when a trip's stops are no longer those stored (S3 dropped): the row
    // deleted, the trip written again with its new count; no row is written, so none is read since.
    await t.db.query("DELETE FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2 AND trip_id = 'T2' AND stop_sequence = 3", [g, DATE]);
    await t.db.query(
      "UPDATE trip_tracking SET planned_stops = 2, computed_at = clock_timestamp(), written = nextval('trip_tracking_written') WHERE group_id = $1 AND service_date = $2 AND trip_id = 'T2'",
      [g, DATE],
    );
    expect(await read()).toEqual([1, 2]);
  });

  it('reads a trip whole when a stop was added to it since: the stop that was last is told in its new place (its scheduled time the departure, no longer the arrival)', async () => {
    const s2 = async () => (await trackingOf(t.db, g, DATE, undefined, { now: new Date(at('07:15:00')), open: true })).find((x) => x.trip_id === 'T2')!.stops;
    // T2 as the test before left it: S1 and S2, S2 the last (its scheduled time the arrival, 08:10 local).
    const before = await s2();
    expect(before.map((x) => x.stop_sequence)).toEqual([1, 2]);
    expect(before[1]!.scheduled_at).toBe(at('07:10:00'));
    // A round from what was recorded writes S3 back (stamped); S1 and S2 read as before keep their stamp.
    await recomputeTrip(t.db, g, DATE, 'T2');
    const after = await s2();
    expect(after.map((x) => x.stop_sequence)).toEqual([1, 2, 3]);
    expect(after[1]!.scheduled_at).toBe(at('07:11:00'));
  });

  it('leaves out a trip once it ended', async () => {
    await send(t, g, devices[1]!.auth, [
      item('trip_event', at('07:21:00'), { ...ref('T2'), event: 'arrival', stop_id: 'S3', stop_sequence: 3, gps_valid: true }),
      item('trip_end', at('07:21:30'), ref('T2')),
    ]);
    expect(Object.keys(await passed(new Date(at('07:22:00'))))).toEqual(['T1']);
  });
});

describe('the stops of named trips', () => {
  /**
   * The plan PostgreSQL keeps for a statement after its fifth run (its generic plan, for any
   * parameters), as `send` sends it, asked for at once on a date of 30,000 stops (copies of the two
   * trips' stops under other trips' ids, analysed; rolled back after), where a scan of the date's
   * stops costs more than a look-up of the trips named, and with scans ruled out: what is asked is
   * whether the statement lets PostgreSQL use the key for the trips.
   */
  async function genericPlan(send: (db: Queryable) => Promise<unknown>): Promise<string> {
    const sent: { text: string; params: readonly unknown[] }[] = [];
    const recorder = { query: async (text: string, params: readonly unknown[] = []) => (sent.push({ text, params }), []) } as unknown as Queryable;
    await send(recorder);
    expect(sent).toHaveLength(1);
    const { text, params } = sent[0]!;
    const rolledBack = new Error('rolled back');
    let plan = '';
    await t.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO trip_tracking_stops
         SELECT (jsonb_populate_record(NULL::trip_tracking_stops, to_jsonb(s) || jsonb_build_object('trip_id', s.trip_id || '-copy-' || n))).*
         FROM trip_tracking_stops s, generate_series(1, 5000) AS n WHERE s.group_id = $1 AND s.service_date = $2`,
        [g, DATE],
      );
      await tx.query('ANALYZE trip_tracking_stops');
      await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await tx.query('SET LOCAL enable_seqscan = off');
      // EXECUTE takes its arguments as literals.
      await tx.query(`PREPARE by_key AS ${text}`);
      try {
        plan = JSON.stringify(await tx.query(`EXPLAIN (FORMAT JSON) EXECUTE by_key(${params.map(sqlLiteral).join(', ')})`));
      } finally {
        await tx.query('DEALLOCATE by_key');
      }
      throw rolledBack;
    }).catch((err: unknown) => {
      if (err !== rolledBack) throw err;
    });
    return plan;
  }

  it("are read by the key whatever plan PostgreSQL keeps for the statement: its generic plan's index condition names the trips (a filter over the date's every stop cost a city's feeds 2.2 s a rebuild)", async () => {
    expect(await genericPlan((db) => selectStops(db, g, DATE, ['T1']))).toMatch(/Index Cond[^,]*trip_id = ANY/);
    // And the rows are those of the trip named.
    expect(new Set((await selectStops(t.db, g, DATE, ['T1'])).map((r) => r.trip_id))).toEqual(new Set(['T1']));
  });

  it('written since a write: read by the key too, trip by trip, whatever the plan', async () => {
    expect(await genericPlan((db) => selectStopsWritten(db, g, DATE, [{ trip_id: 'T1', written: 0 }]))).toMatch(/Index Cond[^,]*trip_id = k\.t/);
  });
});
