/**
 * Migration 0025: the trip tracking's tables leave room on each page for their rows' next
 * versions, so the rounds' updates (none changes an indexed column) stay on their row's page
 * (HOT: no new index entry, no dead row for vacuum). The truth is where PostgreSQL puts the new
 * version (its ctid's page), on a page filled as the table fills it. On both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb, type TestDb } from '../helpers/db.js';

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(async () => t?.drop());

/** The page of a row (its ctid's block number). */
const pageOf = async (seq: number) =>
  Number((await t.db.query<{ page: string }>("SELECT (ctid::text::point)[0]::bigint::text AS page FROM trip_tracking_stops WHERE trip_id = 'T' AND stop_sequence = $1", [seq]))[0]!.page);

describe('migration 0025', () => {
  it('sets the fillfactor of trip_tracking (70) and trip_tracking_stops (80)', async () => {
    const rows = await t.db.query<{ relname: string; reloptions: string[] | null }>(
      "SELECT relname, reloptions FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname IN ('trip_tracking', 'trip_tracking_stops') ORDER BY relname");
    expect(rows.map((r) => [r.relname, r.reloptions])).toEqual([['trip_tracking', ['fillfactor=70']], ['trip_tracking_stops', ['fillfactor=80']]]);
  });

  it("a stop row written again (its passing recorded) stays on its page once the table filled that page as it fills it", async () => {
    // Stop rows inserted one by one until the second page is started: the first is as full as the fillfactor lets it be.
    let seq = 0;
    do {
      seq++;
      await t.db.query(
        `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, stop_name, scheduled_arrival_at, scheduled_departure_at, doors_in, doors_out)
         VALUES ('g', '2026-03-10', 'T', $1::int, 'S' || $1::text, 'A stop of some name', '2026-03-10T07:30:00Z', '2026-03-10T07:30:30Z', '{}', '{}')`, [seq]);
    } while ((await pageOf(seq)) === 0);
    expect(seq).toBeGreaterThan(10);
    // The first row of the first page passed: the rounds' upsert, as trips/queries/round.ts writes it.
    await t.db.query(
      `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, stop_name, actual_at, source, delay_seconds, lat, lon, gps_valid, device_id, vehicle_id, doors_in, doors_out)
       VALUES ('g', '2026-03-10', 'T', 1, 'S1', 'A stop of some name', '2026-03-10T07:31:10Z', 'event', 70, 40.7, -73.9, true, 'device-1', 'vehicle-1', '{2}', '{1}')
       ON CONFLICT (group_id, service_date, trip_id, stop_sequence) DO UPDATE SET actual_at = EXCLUDED.actual_at, source = EXCLUDED.source, delay_seconds = EXCLUDED.delay_seconds,
         lat = EXCLUDED.lat, lon = EXCLUDED.lon, gps_valid = EXCLUDED.gps_valid, device_id = EXCLUDED.device_id, vehicle_id = EXCLUDED.vehicle_id, doors_in = EXCLUDED.doors_in, doors_out = EXCLUDED.doors_out`);
    expect(await pageOf(1)).toBe(0);
  });
});
