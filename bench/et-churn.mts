import { readSnapshot } from '../src/domains/feeds/cache.js';
import { estimatedTimetableOutput } from '../src/domains/feeds/siri/build.js';
import { scheduleMemoOf } from '../src/domains/gtfs/schedule-memo.js';
import { openPostgres } from '../src/platform/db/postgres.js';
import { loadConfig } from '../src/config.js';
const url = process.argv[2]!;
const share = Number(process.argv[3] ?? 0.6);
const config = loadConfig({ DATABASE_URL: url });
const db = await openPostgres({ connectionString: url, poolSize: 4 });
const at = (await db.query<{ at: Date }>('SELECT max(position_at) AS at FROM device_latest WHERE group_id = $1', ['netbench']))[0]!.at;
const net = await readSnapshot(db, 'netbench', at, config, scheduleMemoOf(db), { recompute: false });
await db.close();
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
let t = cpu(); let w = performance.now();
let out = await estimatedTimetableOutput(net, 'netbench');
console.log(`cold: ${Math.round(cpu() - t)} ms CPU, ${Math.round(performance.now() - w)} ms wall, ${out!.gzip.length} gz, deflated ${out!.pieces.deflated}`);
let seed = 7; const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const sig = new Map(net.trips.map((ft) => [ft.key, ft.signature]));
const chains = [...new Set(net.trips.flatMap((ft) => (ft.prediction?.from_trip_id ? [ft.prediction.from_trip_id] : [])))];
let sumCpu = 0, sumWall = 0;
for (let i = 1; i <= 6; i++) {
  // A vehicle reported: its trip in progress told anew, and half the time its next trips too.
  const reported = new Map(chains.filter(() => rnd() < share).map((c) => [c, rnd() < 0.5]));
  let changed = 0;
  const trips = net.trips.map((ft) => {
    const from = ft.prediction?.from_trip_id;
    const s = sig.get(ft.key) ?? null;
    if (s !== null && from && reported.has(from) && (from === ft.trip.trip_id || reported.get(from))) { changed++; sig.set(ft.key, `${ft.signature}#${i}`); }
    return { ...ft, signature: sig.get(ft.key) ?? null };
  });
  global.gc?.();
  t = cpu(); w = performance.now();
  out = await estimatedTimetableOutput({ ...net, trips }, 'netbench', { previous: out!.pieces });
  const c = cpu() - t, wl = performance.now() - w; if (i > 1) { sumCpu += c; sumWall += wl; }
  console.log(`build ${i}: ${reported.size} of ${chains.length} vehicles reported, ${changed} journeys changed: ${Math.round(c)} ms CPU, ${Math.round(wl)} ms wall, made ${out!.pieces.made}, deflated ${out!.pieces.deflated}, ${out!.gzip.length} gz`);
}
console.log(`builds 2-6 mean: ${Math.round(sumCpu / 5)} ms CPU, ${Math.round(sumWall / 5)} ms wall`);
