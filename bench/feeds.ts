/**
 * npm run bench:feeds: GTFS-Realtime VehiclePositions for 6,000 vehicles. Prints, over several
 * runs, the time to build the feed from the snapshot (protobuf encoding with the bindings, plus the
 * fingerprint encoding behind the ETag) and the time of the whole refresh on PostgreSQL (reading
 * the latest positions with their duties and routes, then building). Target: build under 100 ms.
 *
 * Options (env): VEHICLES (6000), RUNS (10), DATABASE_URL.
 */
import { createGroup } from '../src/domains/groups/service.js';
import { buildFeed } from '../src/domains/feeds/gtfs-rt/feeds.js';
import { vehiclesNow, type NetworkNow } from '../src/domains/feeds/network.js';
import { benchDatabase, fmt, percentile } from './support.js';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';

const VEHICLES = Number(process.env['VEHICLES'] ?? 6000);
const RUNS = Number(process.env['RUNS'] ?? 10);

async function main() {
  const { db, drop } = await benchDatabase('postgres');
  const app = await buildApp({ config: testConfig({ logLevel: 'silent' }), db, logger: false });
  try {
    await createGroup(app.ctx, { group_id: 'bench', name: 'Bench network', timezone: 'Europe/Paris' });
    const now = new Date();
    // Vehicles, devices, open duties and a latest position each (seen within the last minute).
    await db.query("INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate) SELECT 'bench', 'v' || i, 'F' || i, 'P-' || i FROM generate_series(1, $1) i", [VEHICLES]);
    await db.query("INSERT INTO devices (group_id, device_id) SELECT 'bench', 'd' || i FROM generate_series(1, $1) i", [VEHICLES]);
    await db.query(
      `INSERT INTO duties (group_id, duty_id, device_id, driver_id, vehicle_id, signed_on_at, sign_on)
       SELECT 'bench', 'duty' || i, 'd' || i, lpad(to_hex(i), 24, '0'), 'v' || i, $2::timestamptz - interval '2 hours', '{}' FROM generate_series(1, $1) i`,
      [VEHICLES, now],
    );
    await db.query(
      `INSERT INTO device_latest (group_id, device_id, position_at, lat, lon, gps_valid, speed_kmh, bearing, last_seen_at)
       SELECT 'bench', 'd' || i, $2::timestamptz - (i % 60) * interval '1 second', 48.8 + (i % 100) / 1000.0, 2.3 + (i / 100) / 1000.0, true, 30, i % 360, $2
       FROM generate_series(1, $1) i`,
      [VEHICLES, now],
    );
    await db.query('ANALYZE');
    const build: number[] = [];
    const refresh: number[] = [];
    let bytes = 0;
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      const vehicles = await vehiclesNow(db, 'bench', now, 300);
      const t1 = performance.now();
      const net: NetworkNow = { groupId: 'bench', timezone: 'Europe/Paris', now, trips: [], updates: [], vehicles };
      const out = buildFeed(net, 'vehicle-positions');
      const t2 = performance.now();
      if (vehicles.length !== VEHICLES) throw new Error(`read ${vehicles.length} vehicles, expected ${VEHICLES}`);
      bytes = out.body.length;
      build.push(t2 - t1);
      refresh.push(t2 - t0);
    }
    build.sort((a, b) => a - b);
    refresh.sort((a, b) => a - b);
    console.log(`VehiclePositions, ${fmt(VEHICLES)} vehicles, ${RUNS} runs, ${fmt(bytes / 1024)} KiB of protobuf`);
    console.log(`  build (encode + fingerprint): median ${fmt(percentile(build, 50), 1)} ms, max ${fmt(build.at(-1)!, 1)} ms (target < 100 ms)`);
    console.log(`  whole refresh on PostgreSQL (read + build): median ${fmt(percentile(refresh, 50), 1)} ms, max ${fmt(refresh.at(-1)!, 1)} ms`);
  } finally {
    await app.close();
    await drop();
  }
}

await main();
