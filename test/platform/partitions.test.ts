/**
 * Raw reports partitioned by time (issue #16; migration 0017, src/platform/db/partitions.ts):
 * partitions made ahead at start, when the clock passes midnight, on demand for a backlog, and
 * after a restart; reads across partitions; the retention of positions; the conversion of
 * existing tables. On both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { fixedClock } from '../../src/platform/clock.js';
import type { Db } from '../../src/platform/db/index.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { migrations } from '../../src/platform/db/migrations/index.js';
import { ensurePartitions, listPartitions, maintainPartitions } from '../../src/platform/db/partitions.js';
import { trackingOf } from '../../src/domains/trips/tracking.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { engine, openTestDb } from '../helpers/db.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

// Service date 2026-12-01 (a Tuesday, Paris at +01:00): T1 runs 00:50–01:10 local, that is
// 2026-11-30T23:50Z–2026-12-01T00:10Z, across a day of positions and a month of trip events and counts.
const DATE = '2026-12-01';
const FEED = {
  'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.850,2.35\nS2,Second,48.860,2.35\nS3,Third,48.870,2.35\n',
  'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id,shape_id\nR1,WK,T1,Third,0,B1,SH1\n',
  'shapes.txt': 'shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\nSH1,48.850,2.35,1\nSH1,48.870,2.35,2\n',
  'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,00:50:00,00:50:00,S1,1\nT1,01:00:00,01:01:00,S2,2\nT1,01:10:00,01:10:00,S3,3\n',
};
const START = new Date('2026-12-01T12:00:00Z');
const DAY = 86_400_000;
const minute = (m: number) => new Date(Date.parse('2026-11-30T23:50:00Z') + m * 60_000).toISOString();
const ref = { trip_id: 'T1', service_date: DATE };

const clock = fixedClock(START);
let t: TestApp;
let g: string;
let dev: Awaited<ReturnType<typeof newDevice>>;
let operator: TestUser;

beforeAll(async () => {
  t = await setup({ clock, config: { partitions: { positionsRetentionDays: 90, checkSeconds: 1 } } });
  g = await newGroup(t);
  operator = await newUser(t, { groupId: g, role: 'operator' });
  // Its session outlives the test clock's travels.
  await t.db.query("UPDATE sessions SET expires_at = '2100-01-01' WHERE user_id = $1", [operator.userId]);
  await importZip(t, g, minimalZip(FEED), { publish: true });
  dev = await newDevice(t, g);
  const [bus, driver] = [await newVehicle(t, g), await newDriver(t, g)];
  expect((await send(t, g, dev.auth, [item('sign_on', minute(-20), { driver_id: driver, vehicle_id: bus })])).json.complete).toBe(true);
});
afterAll(async () => t?.close());

const days = (from: string, n: number, table = 'positions') =>
  Array.from({ length: n }, (_, i) => `${table}_p${new Date(Date.parse(from) + i * DAY).toISOString().slice(0, 10).replaceAll('-', '')}`);

async function until(what: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error('not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('report partitions', () => {
  it('creates the partitions from yesterday to 7 days ahead at start', async () => {
    expect(await listPartitions(t.db, 'positions')).toEqual(expect.arrayContaining(days('2026-11-30', 9)));
    expect(await listPartitions(t.db, 'trip_events')).toEqual(expect.arrayContaining(['trip_events_p202611', 'trip_events_p202612']));
    expect(await listPartitions(t.db, 'passenger_counts')).toEqual(expect.arrayContaining(['passenger_counts_p202611', 'passenger_counts_p202612']));
  });

  it('reads a trip recorded across midnight and a month boundary as one: tracking and the trip events export', async () => {
    // A position a minute from 23:51Z to 00:11Z, 0.001° north each minute: on S2 at 00:01Z (the next day's partition).
    const positions = Array.from({ length: 21 }, (_, k) => item('position', minute(1 + k), { lat: 48.85 + 0.001 * k, lon: 2.35, gps_valid: true, ...ref }));
    const count = (m: number, stop: string, seq: number, boardings: number) =>
      item('passenger_count', minute(m), { ...ref, stop_id: stop, stop_sequence: seq, door: 1, counts: [{ category: 'adult', boardings, alightings: 0 }] });
    const r = await send(t, g, dev.auth, [
      item('trip_start', minute(-2), ref),
      item('trip_event', minute(1), { ...ref, event: 'departure', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
      count(1, 'S1', 1, 5),
      ...positions,
      count(11, 'S2', 2, 3),
      item('trip_event', minute(22), { ...ref, event: 'arrival', stop_id: 'S3', stop_sequence: 3, gps_valid: true }),
      item('trip_end', minute(23), ref),
    ]);
    expect(r.json).toMatchObject({ complete: true, duplicates: [] });
    const where = async (table: string) => (await t.db.query<{ p: string }>(`SELECT DISTINCT tableoid::regclass::text AS p FROM ${table} WHERE group_id = $1 ORDER BY 1`, [g])).map((x) => x.p.replace(/^.*\./, '').replaceAll('"', ''));
    expect(await where('positions')).toEqual(['positions_p20261130', 'positions_p20261201']);
    expect(await where('trip_events')).toEqual(['trip_events_p202611', 'trip_events_p202612']);
    expect(await where('passenger_counts')).toEqual(['passenger_counts_p202611', 'passenger_counts_p202612']);

    const [trip] = await trackingOf(t.db, g, DATE, ['T1'], { now: new Date(minute(30)) });
    // As the same trip within one day (test/trips/tracking.test.ts): S2 departed 16 s after the fix on it.
    const s2 = new Date(Date.parse(minute(11)) + 16_000).toISOString();
    expect(trip!.stops.map((s) => [s.stop_id, s.source, s.actual_at])).toEqual([['S1', 'event', minute(1)], ['S2', 'position', s2], ['S3', 'event', minute(22)]]);
    expect(trip!.km).toEqual({ tk: 2.224, vk: 2.224, recorded_commercial_km: 2.224, off_itinerary_km: 0, reliable_km: 2.224, unreliable_km: 0, percent_km: 100 });
    expect(trip).toMatchObject({ status: 'completed', passengers: { boardings: 8, alightings: 0, max_load: 8 } });

    const events = await inject(t, { url: `/api/v4/groups/${g}/trip-events?start_date=2026-11-30&end_date=2026-12-01`, headers: operator.auth });
    expect(events.status).toBe(200);
    expect(events.json.map((e: { event: string; stop_id: string }) => [e.event, e.stop_id])).toEqual([['departure', 'S1'], ['arrival', 'S3']]);
  });

  it('stores a backlog of days without partition (made on demand) and answers its retry as duplicates', async () => {
    // 30 days back, one position a day: most have no partition yet.
    const backlog = Array.from({ length: 30 }, (_, i) => item('position', new Date(START.getTime() - (30 - i) * DAY), { lat: 48.85, lon: 2.35, gps_valid: true }));
    const events = [item('trip_event', new Date(START.getTime() - 40 * DAY), { trip_id: 'OLD', service_date: '2026-10-22', event: 'departure', stop_id: 'S1', gps_valid: false })];
    const first = await send(t, g, dev.auth, [...backlog, ...events]);
    expect(first.json).toMatchObject({ complete: true, duplicates: [] });
    expect(first.json.accepted).toHaveLength(31);
    expect(await listPartitions(t.db, 'positions')).toEqual(expect.arrayContaining(days('2026-11-01', 30)));
    expect(await listPartitions(t.db, 'trip_events')).toContain('trip_events_p202610');
    const again = await send(t, g, dev.auth, [...backlog, ...events]);
    expect(again.json).toMatchObject({ complete: true, accepted: [] });
    expect(again.json.duplicates).toHaveLength(31);
    const [n] = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM positions WHERE group_id = $1 AND device_id = $2 AND at < '2026-11-30T23:00:00Z'", [g, dev.deviceId]);
    expect(n!.n).toBe(30);
  });

  it('refuses, alone, trip reports older than the retention of positions or more than 7 days ahead', async () => {
    const old = item('position', new Date(START.getTime() - 91 * DAY), { lat: 48.85, lon: 2.35, gps_valid: true });
    const ahead = item('trip_event', new Date(START.getTime() + 8 * DAY), { trip_id: 'T9', service_date: '2026-12-09', event: 'departure', gps_valid: false });
    const good = item('position', START, { lat: 48.85, lon: 2.35, gps_valid: true });
    const r = await send(t, g, dev.auth, [old, ahead, good]);
    expect(r.status).toBe(200);
    expect(r.json.accepted).toEqual([good.id]);
    expect(r.json.rejected).toEqual([
      { index: 0, id: old.id, errors: [{ loc: ['at'], msg: expect.stringContaining('older than the 90 days positions are kept (POSITIONS_RETENTION_DAYS)') }] },
      { index: 1, id: ahead.id, errors: [{ loc: ['at'], msg: 'at is more than 7 days ahead of the service\'s clock' }] },
    ]);
  });

  it('creates the next day\'s partitions once the clock passes midnight', async () => {
    expect(await listPartitions(t.db, 'positions')).not.toContain('positions_p20261209');
    clock.set('2026-12-02T00:00:30Z');
    // checkSeconds is 1: the maintainer's next round sees the new day.
    await until(async () => (await listPartitions(t.db, 'positions')).includes('positions_p20261209'));
  });

  it('a restart on another connection creates what the new day needs', async () => {
    // The running app's clock stays at 2026-12-02: only the restarted one knows it is the 20th.
    // Another instance (PostgreSQL: a new connection to the same schema; PGlite: the same database).
    const db: Db = engine === 'postgres' ? await t.testDb.reopen() : t.db;
    const clock2 = fixedClock('2026-12-20T08:00:00Z');
    const app = await buildApp({ config: testConfig({ partitions: { positionsRetentionDays: 0, checkSeconds: 300 } }), db, clock: clock2, logger: false, serializers: 'lazy' });
    await app.ready();
    expect(await listPartitions(db, 'positions')).toEqual(expect.arrayContaining(days('2026-12-19', 9)));
    expect(await listPartitions(db, 'trip_events')).toContain('trip_events_p202612');
    await app.close();
  });

  it('two instances making the same partitions at once both succeed (the advisory lock), and make each once', async () => {
    const other: Db = engine === 'postgres' ? await t.testDb.reopen() : t.db;
    const at = new Date('2026-09-15T10:00:00Z');
    const later = fixedClock('2027-01-10T00:00:00Z');
    await Promise.all([
      ensurePartitions(t.db, [{ table: 'positions', at }, { table: 'trip_events', at }]),
      ensurePartitions(other, [{ table: 'positions', at }, { table: 'trip_events', at }]),
      maintainPartitions(t.db, later, { positionsRetentionDays: 0 }),
      maintainPartitions(other, later, { positionsRetentionDays: 0 }),
    ]);
    const positions = await listPartitions(t.db, 'positions');
    expect(positions).toEqual(expect.arrayContaining(['positions_p20260915', ...days('2027-01-09', 9)]));
    expect(positions.filter((n) => n === 'positions_p20260915')).toHaveLength(1);
    expect(await listPartitions(t.db, 'trip_events')).toEqual(expect.arrayContaining(['trip_events_p202609', 'trip_events_p202701']));
  });

  it('drops the day partitions of positions past the retention, keeps newer ones, trip events, counts and tracking', async () => {
    const before = await trackingOf(t.db, g, DATE, ['T1'], { now: new Date(minute(30)) });
    // 90 days after 2026-12-01T12:00Z: the partitions ending by then go (2026-11-30 and older), 2026-12-01 stays.
    clock.set(new Date(START.getTime() + 90 * DAY));
    const r = await maintainPartitions(t.db, clock, { positionsRetentionDays: 90 });
    // The periodic round may have dropped them first; either way they are gone now.
    const positions = await listPartitions(t.db, 'positions');
    expect(positions).not.toContain('positions_p20261130');
    expect(positions).not.toContain('positions_p20261101');
    expect(positions).toEqual(expect.arrayContaining(['positions_p20261201', 'positions_p20261202']));
    expect(r.dropped.every((n) => n < 'positions_p20261201')).toBe(true);
    const [left] = await t.db.query<{ first: Date }>('SELECT min(at) AS first FROM positions WHERE group_id = $1', [g]);
    expect(left!.first.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(await listPartitions(t.db, 'trip_events')).toEqual(expect.arrayContaining(['trip_events_p202610', 'trip_events_p202611', 'trip_events_p202612']));
    const [counts] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM passenger_counts WHERE group_id = $1', [g]);
    expect(counts!.n).toBe(2);
    // The stored tracking is derived, and kept: the same trip, the same kilometres.
    expect(await trackingOf(t.db, g, DATE, ['T1'], { now: new Date(minute(30)) })).toEqual(before);
  });
});

describe('migration 0017', () => {
  it('moves the rows of the report tables into partitions, keeps their keys and indexes, and gives partitions no change-feed trigger', async () => {
    const tdb = await openTestDb({ migrate: false });
    try {
      const db = tdb.db;
      await migrate(db, migrations.filter((m) => m.version < 17));
      const days = ['2025-12-31T23:59:59Z', '2026-01-01T00:00:00Z', '2026-02-15T10:00:00Z'];
      for (const [i, at] of days.entries()) {
        const id = `00000000-0000-4000-8000-00000000000${i}`;
        await db.query("INSERT INTO positions (group_id, device_id, client_id, at, lat, lon, gps_valid, received_at) VALUES ('g', 'd', $1, $2, 1, 2, true, now())", [id, at]);
        await db.query("INSERT INTO trip_events (group_id, device_id, client_id, at, event, trip_id, service_date, received_at) VALUES ('g', 'd', $1, $2, 'departure', 'T', '2026-01-01', now())", [id, at]);
        await db.query(
          "INSERT INTO passenger_counts (group_id, device_id, client_id, category, at, trip_id, service_date, stop_id, door, boardings, alightings, received_at) VALUES ('g', 'd', $1, 'adult', $2, 'T', '2026-01-01', 'S', 1, 1, 0, now())",
          [id, at],
        );
      }
      await migrate(db, migrations.filter((m) => m.version < 24));
      expect(await listPartitions(db, 'positions')).toEqual(['positions_p20251231', 'positions_p20260101', 'positions_p20260215']);
      expect(await listPartitions(db, 'trip_events')).toEqual(['trip_events_p202512', 'trip_events_p202601', 'trip_events_p202602']);
      for (const table of ['positions', 'trip_events', 'passenger_counts']) {
        const [n] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
        expect(n!.n).toBe(3);
      }
      const indexes = (await db.query<{ name: string }>(
        "SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND tablename IN ('positions', 'trip_events', 'passenger_counts') ORDER BY 1",
      )).map((r) => r.name);
      expect(indexes).toEqual(['passenger_counts_pkey', 'passenger_counts_trip', 'positions_device', 'positions_pkey', 'positions_trip', 'trip_events_pkey', 'trip_events_time', 'trip_events_trip']);
      // A retried item (same id, same time) is still a conflict.
      const retried = await db.query("INSERT INTO positions (group_id, device_id, client_id, at, lat, lon, gps_valid, received_at) VALUES ('g', 'd', '00000000-0000-4000-8000-000000000000', '2025-12-31T23:59:59Z', 1, 2, true, now()) ON CONFLICT DO NOTHING RETURNING client_id");
      expect(retried).toEqual([]);
      const triggers = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid WHERE c.relnamespace = current_schema()::regnamespace AND g.tgname = 'transit_ops_change' AND (c.relispartition OR c.relname IN ('positions', 'trip_events', 'passenger_counts'))",
      );
      expect(triggers[0]!.n).toBe(0);
    } finally {
      await tdb.drop();
    }
  });
});

describe('migration 0024', () => {
  /** The key columns, in order, of each primary key of the report tables and their partitions. */
  const keysOf = (db: Db) =>
    db.query<{ name: string; columns: string[] }>(
      `SELECT c.relname AS name, array_agg(a.attname::text ORDER BY k.ord) AS columns
       FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
       CROSS JOIN unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
       WHERE i.indisprimary AND c.relnamespace = current_schema()::regnamespace AND c.relname ~ '^(positions|trip_events|passenger_counts)'
       GROUP BY c.relname ORDER BY c.relname`,
    );

  it('keys the reports by time first, over every partition, with the same items made duplicates as before, and drops the trip events\' index by time', async () => {
    const tdb = await openTestDb({ migrate: false });
    try {
      const db = tdb.db;
      await migrate(db, migrations.filter((m) => m.version < 24));
      for (const [i, at] of ['2026-01-01T10:00:00Z', '2026-02-15T10:00:00Z'].entries()) {
        const id = `00000000-0000-4000-8000-00000000000${i}`;
        await db.query("SELECT transit_ops_ensure_partition('positions', 'day', $1), transit_ops_ensure_partition('trip_events', 'month', $1)", [at]);
        await db.query("INSERT INTO positions (group_id, device_id, client_id, at, lat, lon, gps_valid, received_at) VALUES ('g', 'd', $1, $2, 1, 2, true, now())", [id, at]);
        await db.query("INSERT INTO trip_events (group_id, device_id, client_id, at, event, trip_id, service_date, received_at) VALUES ('g', 'd', $1, $2, 'departure', 'T', '2026-01-01', now())", [id, at]);
      }
      await migrate(db);
      const byTime = ['group_id', 'at', 'device_id', 'client_id'];
      expect(await keysOf(db)).toEqual([
        { name: 'passenger_counts', columns: [...byTime, 'category'] },
        { name: 'positions', columns: byTime },
        { name: 'positions_p20260101', columns: byTime },
        { name: 'positions_p20260215', columns: byTime },
        { name: 'trip_events', columns: byTime },
        { name: 'trip_events_p202601', columns: byTime },
        { name: 'trip_events_p202602', columns: byTime },
      ]);
      const indexes = (await db.query<{ name: string }>(
        "SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND tablename IN ('positions', 'trip_events', 'passenger_counts') ORDER BY 1",
      )).map((r) => r.name);
      expect(indexes).toEqual(['passenger_counts_pkey', 'passenger_counts_trip', 'positions_device', 'positions_pkey', 'positions_trip', 'trip_events_pkey', 'trip_events_trip']);
      // A retried item (same device, id and time) is a duplicate; the same id at another time is not (as under the old key).
      const insert = (at: string) =>
        db.query("INSERT INTO positions (group_id, device_id, client_id, at, lat, lon, gps_valid, received_at) VALUES ('g', 'd', '00000000-0000-4000-8000-000000000000', $1, 1, 2, true, now()) ON CONFLICT DO NOTHING RETURNING client_id", [at]);
      expect(await insert('2026-01-01T10:00:00Z')).toEqual([]);
      expect(await insert('2026-01-01T10:00:01Z')).toHaveLength(1);
    } finally {
      await tdb.drop();
    }
  });
});
