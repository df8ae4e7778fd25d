/**
 * node --expose-gc --import tsx bench/et-churn.ts --database URL [--group netbench] [--share 0.6]
 * [--builds 6]: what the SIRI EstimatedTimetable costs to build again when a share of a city's
 * vehicles reported since its last build, on a database that `npm run bench:network -- --keep`
 * left. One snapshot is read (as the feeds' worker reads it); the timetable is built from nothing,
 * then --builds times from the previous build, each time after --share of the vehicles "reported":
 * the journey each runs told anew (its signature changed) and, half the time, its next journeys
 * too. Prints each build's CPU, wall time, journeys made and pieces deflated anew, and the mean of
 * builds 2 onwards (bench/RESULTS.md, 2026-12-03 16:29: the timetable told by vehicle). The
 * random draws are seeded: two codes see the same reports.
 */
import { parseArgs } from 'node:util';
import { readSnapshot } from '../src/domains/feeds/cache.js';
import { estimatedTimetableOutput } from '../src/domains/feeds/siri/build.js';
import { scheduleMemoOf } from '../src/domains/gtfs/schedule-memo.js';
import { openPostgres } from '../src/platform/db/postgres.js';
import { loadConfig } from '../src/config.js';
const { values: args } = parseArgs({
  options: { database: { type: 'string' }, group: { type: 'string', default: 'netbench' }, share: { type: 'string', default: '0.6' }, builds: { type: 'string', default: '6' } },
});
if (!args.database) throw new Error('--database URL: a database bench:network --keep left');
const url = args.database;
const group = args.group!;
const share = Number(args.share);
const builds = Number(args.builds);
const config = loadConfig({ DATABASE_URL: url });
const db = await openPostgres({ connectionString: url, poolSize: 4 });
const at = (await db.query<{ at: Date }>('SELECT max(position_at) AS at FROM device_latest WHERE group_id = $1', [group]))[0]!.at;
const net = await readSnapshot(db, group, at, config, scheduleMemoOf(db), { recompute: false });
await db.close();
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
let t = cpu(); let w = performance.now();
let out = await estimatedTimetableOutput(net, group);
console.log(`cold: ${Math.round(cpu() - t)} ms CPU, ${Math.round(performance.now() - w)} ms wall, ${out!.gzip.length} gz, deflated ${out!.pieces.deflated}`);
let seed = 7; const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const sig = new Map(net.trips.map((ft) => [ft.key, ft.signature]));
const chains = [...new Set(net.trips.flatMap((ft) => (ft.prediction?.from_trip_id ? [ft.prediction.from_trip_id] : [])))];
let sumCpu = 0, sumWall = 0;
for (let i = 1; i <= builds; i++) {
  // A vehicle reported: its trip in progress told anew, and half the time its next trips too.
  const reported = new Map(chains.filter(() => rnd() < share).map((c) => [c, rnd() < 0.5]));
  let changed = 0;
  const trips = net.trips.map((ft) => {
    const from = ft.prediction?.from_trip_id;
    const s = sig.get(ft.key) ?? null;
    if (s !== null && from && reported.has(from) && (from === ft.trip.trip_id || reported.get(from))) { changed++; sig.set(ft.key, `${ft.signature}#${i}`); }
    return { ...ft, signature: sig.get(ft.key) ?? null };
  });
  (globalThis as { gc?: () => void }).gc?.();
  t = cpu(); w = performance.now();
  out = await estimatedTimetableOutput({ ...net, trips }, group, { previous: out!.pieces });
  const c = cpu() - t, wl = performance.now() - w; if (i > 1) { sumCpu += c; sumWall += wl; }
  console.log(`build ${i}: ${reported.size} of ${chains.length} vehicles reported, ${changed} journeys changed: ${Math.round(c)} ms CPU, ${Math.round(wl)} ms wall, made ${out!.pieces.made}, deflated ${out!.pieces.deflated}, ${out!.gzip.length} gz`);
}
console.log(`builds 2-${builds} mean: ${Math.round(sumCpu / (builds - 1))} ms CPU, ${Math.round(sumWall / (builds - 1))} ms wall`);
