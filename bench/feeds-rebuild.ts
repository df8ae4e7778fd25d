/**
 * npx tsx bench/feeds-rebuild.ts --database URL [--group netbench] [--at ISO] [--runs 6] [--step 5] [--recomputed]:
 * what one rebuild of a group's feeds costs, alone on the machine, on a database that
 * `npm run bench:network -- --keep` left (a city's network with its morning of reports). The
 * rebuild the feeds' worker thread makes (src/domains/feeds/worker.ts): the snapshot read as the
 * tracking rounds left it, then GTFS-Realtime trip-updates and vehicle-positions and the SIRI
 * estimated timetable built from it, each output with what its previous build kept (the pieces
 * reused), and finished as the cache serves it (gzip, fingerprint). --runs rebuilds, --step
 * seconds apart on the service clock from --at (default: the latest position reported); the
 * first is cold (nothing kept yet). Wall time and CPU of the process (zlib's threads included)
 * per part, and the bytes.
 *
 * A rebuild of the same database at a later clock is not one under live reports: only the
 * passing of time moves the trips (predictions held to the clock, trips leaving the horizon);
 * live, a report moves its trip too (bench:network measures that, with everything else on the
 * machine). --recomputed: before each rebuild but the first, every trip still open is written
 * again (trip_tracking.computed_at and written, migration 0022) with the rows of its last stop
 * passed and the next one (their values unchanged), as if the tracking rounds had recomputed each
 * after a report: the snapshot then reads those rows again, the live case of a network whose every
 * bus reported since the last rebuild (a report changes a stop or two of a trip). It writes to the
 * database given.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { finish, readSnapshot, type Built } from '../src/domains/feeds/cache.js';
import { TripPieces } from '../src/domains/feeds/fragments.js';
import type { NetworkNow } from '../src/domains/feeds/network.js';
import { recipeOf, type OutputSpec } from '../src/domains/feeds/outputs.js';
import { scheduleMemoOf } from '../src/domains/gtfs/schedule-memo.js';
import { openPostgres } from '../src/platform/db/postgres.js';
import { fmt } from './support.js';

const { values: args } = parseArgs({
  options: {
    database: { type: 'string' },
    group: { type: 'string', default: 'netbench' },
    at: { type: 'string' },
    runs: { type: 'string', default: '6' },
    step: { type: 'string', default: '5' },
    recomputed: { type: 'boolean', default: false },
  },
});
if (!args.database) throw new Error('--database URL: a database bench:network --keep left');
const config = loadConfig({ DATABASE_URL: args.database });
const db = await openPostgres({ connectionString: args.database, poolSize: 4 });
const group = args.group!;
const start = args.at
  ? new Date(args.at)
  : (await db.query<{ at: Date }>('SELECT max(position_at) AS at FROM device_latest WHERE group_id = $1', [group]))[0]?.at;
if (!start) throw new Error(`no position reported in group ${group}: give --at`);

const OUTPUTS: [string, OutputSpec][] = [
  ['trip-updates', { kind: 'gtfs-rt', feed: 'trip-updates', format: 'protobuf' }],
  ['vehicle-positions', { kind: 'gtfs-rt', feed: 'vehicle-positions', format: 'protobuf' }],
  ['siri-et', { kind: 'siri-et' }],
];
const states = new Map<string, unknown>();
const memo = scheduleMemoOf(db);

/** Wall and CPU (ms) of `f`. */
async function timed<T>(f: () => Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await f();
  const used = process.cpuUsage(cpu0);
  return { value, wall: performance.now() - t0, cpu: (used.user + used.system) / 1000 };
}

console.log(`group ${group}, from ${start.toISOString()}, ${args.runs} rebuilds ${args.step} s apart (the first cold)`);
/** The last snapshot, which the next is read with (as the feeds' worker does): what is told the same is taken from it. */
let previous: NetworkNow | undefined;
for (let i = 0; i < Number(args.runs); i++) {
  const now = new Date(start.getTime() + i * Number(args.step) * 1000);
  if (args.recomputed && i > 0) {
    // Each open trip written again, with the row of its last stop passed and the next one (what a
    // round after a report rewrites; their values unchanged), as a tracking round writes them.
    const marked = await db.query<{ rows: number }>(
      `WITH t AS (
         UPDATE trip_tracking SET computed_at = clock_timestamp(), written = nextval('trip_tracking_written') WHERE group_id = $1 AND NOT end_reported
         RETURNING service_date, trip_id, written, last_passed_sequence),
       r AS (
         SELECT t.service_date, t.trip_id, s.stop_sequence, t.written FROM t CROSS JOIN LATERAL (
           SELECT stop_sequence FROM trip_tracking_stops s WHERE s.group_id = $1 AND s.service_date = t.service_date AND s.trip_id = t.trip_id
             AND s.stop_sequence >= coalesce(t.last_passed_sequence, 0) ORDER BY s.stop_sequence LIMIT 2) s),
       w AS (
         UPDATE trip_tracking_stops s SET written = r.written FROM r
         WHERE s.group_id = $1 AND s.service_date = r.service_date AND s.trip_id = r.trip_id AND s.stop_sequence = r.stop_sequence RETURNING 1)
       SELECT (SELECT count(*) FROM w)::int AS rows FROM t`,
      [group],
    );
    console.log(`${fmt(marked.length)} open trips written again, ${fmt(marked[0]?.rows ?? 0)} of their stop rows`);
  }
  const snap = await timed(() => readSnapshot(db, group, now, config, memo, { recompute: false, previous }));
  const before = new Set(previous?.trips);
  const same = snap.value.trips.filter((t) => before.has(t)).length;
  previous = snap.value;
  const parts = [`snapshot ${fmt(snap.wall)} / ${fmt(snap.cpu)} ms (${fmt(snap.value.trips.length)} trips, ${fmt(same)} of them kept from the previous snapshot; ${fmt(snap.value.vehicles.length)} vehicles)`];
  let wall = snap.wall;
  let cpu = snap.cpu;
  for (const [name, spec] of OUTPUTS) {
    const out = await timed(async () => {
      const b: Built = await recipeOf(spec)(snap.value, states.get(name));
      states.set(name, b.state);
      return finish(b);
    });
    wall += out.wall;
    cpu += out.cpu;
    const kept = states.get(name);
    const pieces = kept instanceof TripPieces ? `; trips' pieces ${fmt(kept.made)} made, ${fmt(kept.reused)} reused${kept.deflated === undefined ? '' : `, ${fmt(kept.deflated)} deflated anew`}` : '';
    parts.push(`${name} ${fmt(out.wall)} / ${fmt(out.cpu)} ms (${fmt(out.value.size / 1024)} KB, ${fmt((out.value.gzip?.length ?? 0) / 1024)} KB gzipped${pieces})`);
  }
  console.log(`rebuild ${i + 1}: ${fmt(wall)} ms of wall time / ${fmt(cpu)} ms of CPU; wall / CPU of each part: ${parts.join('; ')}`);
}
await db.close();
