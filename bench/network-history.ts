/**
 * `--history-days N` of bench:network (issue #16, cost over time): the N service days before the
 * measured one filled with what the measured day has recorded when this runs (the simulator's
 * start: every bus's morning so far), copied one day back at a time. Each copy is the day's rows of
 * the tables that grow with the reports and the tracking (positions, trip events, passenger
 * counts, trip runs, the stored tracking and its stops), every instant and service date moved back
 * k days and every client id made anew from (id, k), so the copies are distinct reports in their
 * own partitions (made with the service's own ensurePartitions). Duties, sign events and the
 * device history are not copied (the past days' reports carry no duty): what is measured is how
 * the reads, the writes and the exports of today hold with a month of reports beside them.
 *
 * Much faster than playing the days through the device API (a Queens day is about 700,000 items);
 * the service's own backfill (`simulate --backfill-days`) is the slow, faithful way.
 */
import pg from 'pg';
import { openDatabase } from '../src/platform/db/index.js';
import { ensurePartitions, type PartitionedTable } from '../src/platform/db/partitions.js';

const COPIED = ['positions', 'trip_events', 'passenger_counts', 'trip_runs', 'trip_tracking', 'trip_tracking_stops'] as const;
const PARTITIONED_TABLES: readonly PartitionedTable[] = ['positions', 'trip_events', 'passenger_counts'];
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The select list copying a row of `table` k days back ($2: k). */
async function copyList(c: pg.Client, table: string): Promise<{ columns: string[]; select: string[] }> {
  const cols = (await c.query<{ column_name: string; data_type: string }>(
    'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position', [table],
  )).rows;
  return {
    columns: cols.map((x) => x.column_name),
    select: cols.map(({ column_name: n, data_type: t }) => {
      if (n === 'client_id') return `md5(${n}::text || ':' || $2::text)::uuid`;
      if (t === 'timestamp with time zone') return `${n} - $2::int * interval '1 day'`;
      if (t === 'date') return `${n} - $2::int`;
      return n;
    }),
  };
}

/** Fills the `days` service days before `date` of `groupId`; returns the rows written per table. */
export async function loadHistory(databaseUrl: string, groupId: string, date: string, days: number, log: (m: string) => void): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  const db = await openDatabase({ databaseUrl, dataDir: '', databasePoolSize: 2 });
  const written: Record<string, number> = {};
  try {
    // The instants the day's reports span, for the partitions of the copies.
    const span = (await c.query<{ first: Date | null; last: Date | null }>(
      `SELECT min(at) AS first, max(at) AS last FROM (
         SELECT at FROM positions WHERE group_id = $1 AND service_date = $2 UNION ALL
         SELECT at FROM trip_events WHERE group_id = $1 AND service_date = $2 UNION ALL
         SELECT at FROM passenger_counts WHERE group_id = $1 AND service_date = $2) AS r`, [groupId, date],
    )).rows[0]!;
    if (!span.first || !span.last) throw new Error(`--history-days: nothing recorded on ${date} to copy`);
    const lists = new Map<string, Awaited<ReturnType<typeof copyList>>>();
    for (const t of COPIED) lists.set(t, await copyList(c, t));
    for (let k = 1; k <= days; k++) {
      const t0 = Date.now();
      const wanted: { table: PartitionedTable; at: Date }[] = [];
      for (let at = span.first.getTime() - k * DAY_MS; at <= span.last.getTime() - k * DAY_MS + HOUR_MS; at += HOUR_MS) {
        for (const table of PARTITIONED_TABLES) wanted.push({ table, at: new Date(at) });
      }
      await ensurePartitions(db, wanted);
      let rows = 0;
      await c.query('BEGIN');
      for (const t of COPIED) {
        const { columns, select } = lists.get(t)!;
        const r = await c.query(`INSERT INTO ${t} (${columns.join(', ')}) SELECT ${select.join(', ')} FROM ${t} WHERE group_id = $1 AND service_date = $3::date`, [groupId, k, date]);
        written[t] = (written[t] ?? 0) + (r.rowCount ?? 0);
        rows += r.rowCount ?? 0;
      }
      await c.query('COMMIT');
      if (k === 1 || k % 10 === 0 || k === days) log(`history: day −${k} copied (${rows.toLocaleString('en')} rows, ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
    await c.query(`ANALYZE ${COPIED.join(', ')}`);
    return written;
  } finally {
    await c.end();
    await db.close();
  }
}
