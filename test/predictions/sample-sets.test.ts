/**
 * Migration 0021: the prediction samples stored a row per trip and minute (prediction_sample_sets),
 * read a row per stop through the view prediction_samples. The samples 0019 stored are moved over
 * and read back through the view exactly as they were written, on both engines.
 */
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/platform/db/migrate.js';
import { migrations } from '../../src/platform/db/migrations/index.js';
import { openTestDb } from '../helpers/db.js';

const COLUMNS = 'group_id, service_date::text AS service_date, trip_id, stop_sequence, sampled_minute, stop_id, route_id, sampled_at, predicted_arrival_at, predicted_departure_at, uncertainty_s, horizon_s, basis';

describe('migration 0021', () => {
  it('moves the per-stop samples to a row per trip and minute, read back through the view as they were written', async () => {
    const tdb = await openTestDb({ migrate: false });
    try {
      const db = tdb.db;
      await migrate(db, migrations.filter((m) => m.version < 21));
      // [trip, stop_sequence, sampled_at, predicted arrival, predicted departure, uncertainty, horizon, basis]
      const written: [string, number, string, string, string, number, number, string][] = [
        ['A', 2, '2026-03-16T08:25:00.250Z', '2026-03-16T08:30:30Z', '2026-03-16T08:31:00Z', 30, 330, 'history'],
        ['A', 3, '2026-03-16T08:25:00.250Z', '2026-03-16T08:40:00.5Z', '2026-03-16T08:40:00.5Z', 60, 900, 'schedule'],
        ['A', 2, '2026-03-16T08:26:10Z', '2026-03-16T08:33:20Z', '2026-03-16T08:33:20Z', 30, 430, 'history'],
        ['B', 1, '2026-03-16T08:25:00.250Z', '2026-03-16T08:24:59Z', '2026-03-16T08:25:30Z', 10, -1, 'history'],
        // A second round in the same minute added a stop: moved to the minute's first instant, its horizon from it.
        ['A', 4, '2026-03-16T08:25:40Z', '2026-03-16T08:45:00Z', '2026-03-16T08:45:00Z', 90, 1160, 'history'],
      ];
      for (const [trip, seq, at, arr, dep, unc, hor, basis] of written) {
        await db.query(
          `INSERT INTO prediction_samples (group_id, service_date, trip_id, stop_sequence, sampled_minute, stop_id, route_id, sampled_at, predicted_arrival_at, predicted_departure_at, uncertainty_s, horizon_s, basis)
           VALUES ('g', '2026-03-16', $1, $2::int, date_trunc('minute', $3::timestamptz), 'S' || $2::text, 'R1', $3, $4, $5, $6, $7, $8)`,
          [trip, seq, at, arr, dep, unc, hor, basis],
        );
      }
      type Row = { trip_id: string; stop_sequence: number; sampled_at: Date; predicted_arrival_at: Date; horizon_s: number };
      const read = () => db.query<Row>(`SELECT ${COLUMNS} FROM prediction_samples ORDER BY trip_id, sampled_minute, stop_sequence`);
      const isA4 = (r: Row) => r.trip_id === 'A' && r.stop_sequence === 4;
      const before = await read();
      await migrate(db);
      const after = await read();
      expect(after.filter((r) => !isA4(r))).toEqual(before.filter((r) => !isA4(r)));
      const a4 = after.find(isA4)!;
      expect([new Date(a4.sampled_at).toISOString(), new Date(a4.predicted_arrival_at).toISOString(), a4.horizon_s])
        .toEqual(['2026-03-16T08:25:00.250Z', '2026-03-16T08:45:00.000Z', 1200]);
      // A row per trip and minute: A at 08:25 (three stops), A at 08:26, B at 08:25.
      const sets = await db.query<{ trip_id: string; stop_sequences: number[] }>('SELECT trip_id, stop_sequences FROM prediction_sample_sets ORDER BY trip_id, sampled_minute');
      expect(sets.map((s) => [s.trip_id, s.stop_sequences])).toEqual([['A', [2, 3, 4]], ['A', [2]], ['B', [1]]]);
    } finally {
      await tdb.drop();
    }
  });
});
