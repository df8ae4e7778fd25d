/**
 * npx tsx bench/tracking-check.ts --database URL [--group netbench]: is the stored tracking of
 * every trip of a group what a round from nothing stores? On a database that
 * `npm run bench:network -- --keep` left (a city's morning, its trips computed round after round,
 * incrementally: each round read only the reports that came since, docs/tracking.md), every
 * trip's summary and stop rows are read, then every trip is recomputed by a database handle that
 * holds nothing (each trip's reports read whole), and the rows read again. Prints how many trips
 * and stop rows differ, and the first differences, column by column (computed_at and written aside).
 *
 * It rewrites the group's tracking (with what a round from nothing computes): run it on a
 * benchmark's database, not on a live one.
 */
import { parseArgs } from 'node:util';
import { recomputeTrips } from '../src/domains/trips/tracking/round.js';
import { REFRESH_CHUNK } from '../src/domains/trips/tracking.js';
import { openPostgres } from '../src/platform/db/postgres.js';

const { values: args } = parseArgs({ options: { database: { type: 'string' }, group: { type: 'string', default: 'netbench' } } });
if (!args.database) throw new Error('--database URL: a database bench:network --keep left');
const group = args.group!;

type Row = Record<string, unknown>;
const keyOf = (r: Row) => `${String(r['service_date'])} ${String(r['trip_id'])}${r['stop_sequence'] === undefined ? '' : ` #${String(r['stop_sequence'])}`}`;
const norm = (v: unknown) => (v instanceof Date ? v.toISOString() : JSON.stringify(v));

async function read(db: Awaited<ReturnType<typeof openPostgres>>) {
  const trips = await db.query<Row>(`SELECT * FROM trip_tracking WHERE group_id = $1 ORDER BY service_date, trip_id`, [group]);
  const stops = await db.query<Row>(`SELECT * FROM trip_tracking_stops WHERE group_id = $1 ORDER BY service_date, trip_id, stop_sequence`, [group]);
  // When and by which write each was stored: a recomputation from nothing is a later write.
  for (const t of trips) {
    delete t['computed_at'];
    delete t['written'];
  }
  for (const s of stops) delete s['written'];
  return { trips: new Map(trips.map((r) => [keyOf(r), r])), stops: new Map(stops.map((r) => [keyOf(r), r])) };
}

function compare(what: string, before: Map<string, Row>, after: Map<string, Row>): number {
  let differ = 0;
  const shown: string[] = [];
  for (const k of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(k);
    const b = after.get(k);
    const cols = !a || !b ? ['(row)'] : Object.keys(b).filter((c) => norm(a[c]) !== norm(b[c]));
    if (cols.length === 0) continue;
    differ++;
    if (shown.length < 10) shown.push(`  ${k}: ${cols.map((c) => (a && b ? `${c} ${norm(a[c])} → ${norm(b[c])}` : `${a ? 'only stored' : 'only recomputed'}`)).join(', ')}`);
  }
  console.log(`${what}: ${before.size} stored, ${after.size} recomputed from nothing, ${differ} differ`);
  for (const s of shown) console.log(s);
  return differ;
}

const db = await openPostgres({ connectionString: args.database, poolSize: 4 });
try {
  const pending = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM trip_tracking_dirty WHERE group_id = $1', [group]))[0]!.n;
  if (pending > 0) throw new Error(`${pending} trips are still marked dirty: their stored tracking is not the rounds' last word`);
  const before = await read(db);
  const keys = [...before.trips.values()].map((r) => ({ group_id: group, service_date: String(r['service_date']), trip_id: String(r['trip_id']) }));
  const t0 = performance.now();
  for (let i = 0; i < keys.length; i += REFRESH_CHUNK) await recomputeTrips(db, keys.slice(i, i + REFRESH_CHUNK));
  console.log(`${keys.length} trips recomputed from nothing in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const after = await read(db);
  const differ = compare('trips', before.trips, after.trips) + compare('stop rows', before.stops, after.stops);
  process.exitCode = differ === 0 ? 0 : 1;
} finally {
  await db.close();
}
