/**
 * npm run bench:console: the console's two heavy redraws, measured in the page (headless Debian
 * Chromium, WebGL by SwiftShader: no GPU on this machine, so the map figures are a software
 * renderer's, pessimistic against a desktop with a graphics card).
 * - Map: the console's own path, from the store to a rendered frame. The live refreshes are
 *   stopped; the store gets a service day of 30,000 synthetic trips (the schedule of the headway
 *   flags) and 5,000 synthetic vehicles on them (on the demo network's shapes, delays spread so
 *   every colour and flag is drawn). First the schedule indexed and the flags computed; then
 *   five full redraws (every vehicle moved, a fifth with a new delay) and five live updates (a
 *   tenth of the vehicles moved), each timed from MapView.drawVehicles() (flags, diff or whole
 *   data, sent to the worker) to MapLibre's `idle` after a repaint (tiles laid out again, a frame
 *   drawn); median and max.
 * - Trips table: a service day of 30,000 synthetic trips put in the store; the time of the table's
 *   update() (filter, sort, the rows in sight rebuilt) until the next frame; then a live update
 *   (the delays of 3,000 trips changed, sorted by delay) the same way; five of each, median and
 *   max. The table alone: the map's own listener on the trips (headway flags) is not counted.
 * Options: BENCH_VEHICLES (5000), BENCH_TRIPS (30000), CHROMIUM_PATH.
 */
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { demoAccount, loadDemo } from '../src/domains/demo/load.js';
import { openPglite } from '../src/platform/db/pglite.js';
import { migrate } from '../src/platform/db/migrate.js';
import { CHROMIUM, CHROMIUM_FLAGS } from '../test/browser/chromium.js';

const VEHICLES = Number(process.env['BENCH_VEHICLES'] ?? 5000);
const TRIPS = Number(process.env['BENCH_TRIPS'] ?? 30000);

async function main() {
  const db = await openPglite('memory://');
  await migrate(db);
  const app = await buildApp({ config: testConfig(), db, logger: false });
  await loadDemo(app.ctx);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
    await page.goto(`${base}/console/`);
    await page.fill('input[name=password]', demoAccount('operator').password);
    await page.click('form#login button[type=submit]');
    await page.waitForFunction(() => (globalThis as any).transitConsole?.map?.map?.getSource('vehicles'), undefined, { timeout: 120_000 });

    // tsx (esbuild, keepNames) wraps the functions named inside the measured code with __name.
    await page.evaluate('globalThis.__name = (f) => f');
    // The console's own refreshes stopped: the store then holds only the synthetic network.
    await page.evaluate(() => {
      const c = (globalThis as any).transitConsole;
      c.stream.stop();
      c.store.stop();
    });
    type MapFigures = { full: number[]; live: number[]; flags: number; flagged: number; drawn: number };
    const map: MapFigures = await page.evaluate(async ({ n, tripCount }: { n: number; tripCount: number }) => {
      const c = (globalThis as any).transitConsole;
      const m = c.map.map;
      const shapes: [number, number][][] = c.store.network.routes.flatMap((r: any) => r.shapes);
      const routes = [...c.store.routes.keys()];
      const date = c.store.date;
      const day = Date.parse(`${date}T04:00:00Z`);
      // A service day of trips (the schedule of the headway flags) and n vehicles on some of them.
      c.store.trips = Array.from({ length: tripCount }, (_, i) => ({
        kind: 'recorded', id: `SYN-${i}`, service_date: date, start_time: null, route_id: routes[i % routes.length], headsign: null, direction_id: i % 2, block_id: null,
        departure_time: new Date(day + Math.floor(i / routes.length) * 60_000).toISOString(), arrival_time: null, status: 'in_progress', delay_seconds: null,
        started_at: null, ended_at: null, recorded_stops: 0, planned_stops: 0, vehicle_ids: [], driver_ids: [], device_ids: [],
      }));
      const place = (i: number) => {
        const s = shapes[i % shapes.length]!;
        const p = s[Math.floor(Math.random() * s.length)]!;
        return { lon: p[0] + (Math.random() - 0.5) * 0.002, lat: p[1] + (Math.random() - 0.5) * 0.002 };
      };
      const delay = () => Math.round((Math.random() - 0.3) * 900);
      c.store.vehicles = new Map();
      for (let i = 0; i < n; i++) {
        const trip = c.store.trips[(i * 5) % tripCount];
        c.store.vehicles.set(`d${i}`, {
          duty_id: `duty${i}`, device_id: `d${i}`, vehicle_id: `v${i}`, fleet_number: String(i), driver_id: `dr${i}`, driver_name: null, signed_on_at: new Date(day).toISOString(),
          position: { ...place(i), bearing: null, speed_kmh: null, at: new Date().toISOString() },
          trip: { trip_id: trip.id, service_date: date, start_time: null, route_id: trip.route_id, route_short_name: null, route_color: null, headsign: null, delay_seconds: delay(), last_stop_sequence: null, last_event: null },
        });
      }
      const idle = async (draw: () => Promise<void>) => {
        const t0 = performance.now();
        await draw(); // the diff (or data) applied in the worker
        m.triggerRepaint();
        await new Promise((resolve) => m.once('idle', resolve)); // tiles laid out again, a frame drawn
        return performance.now() - t0;
      };
      const move = (share: number) => {
        let k = 0;
        for (const v of c.store.vehicles.values()) {
          if (k++ % Math.round(1 / share) !== 0) continue;
          v.position = { ...v.position, ...place(k) };
          if (Math.random() < 0.2) v.trip.delay_seconds = delay();
        }
      };
      const t0 = performance.now();
      c.map.index = null;
      c.map.computeFlags(); // the schedule indexed (a new list of trips), then the flags
      const flags = performance.now() - t0;
      await idle(() => c.map.drawVehicles()); // warm-up: every vehicle added
      const full: number[] = [];
      const live: number[] = [];
      for (let round = 0; round < 5; round++) {
        move(1);
        full.push(await idle(() => c.map.drawVehicles()));
      }
      for (let round = 0; round < 5; round++) {
        move(0.1);
        live.push(await idle(() => c.map.drawVehicles()));
      }
      const drawn = m.querySourceFeatures('vehicles').length;
      return { full, live, flags, flagged: c.map.flags.length, drawn };
    }, { n: VEHICLES, tripCount: TRIPS });

    await page.evaluate(() => ((globalThis as any).location.hash = '#trips'));
    await page.waitForSelector('[data-testid=trips-table] tbody tr', { timeout: 60_000 });
    await page.evaluate(() => ((globalThis as any).transitConsole.map.index = null));
    const table: { load: number[]; live: number[]; rows: number } = await page.evaluate(async (n: number) => {
      const c = (globalThis as any).transitConsole;
      const routes = [...c.store.routes.keys()];
      const statuses = ['scheduled', 'in_progress', 'completed', 'partial', 'not_done', 'cancelled'];
      const day = Date.parse(`${c.store.date}T04:00:00Z`);
      const trips = Array.from({ length: n }, (_, i) => ({
        kind: 'recorded', id: `SYN-${i}`, service_date: c.store.date, start_time: null, route_id: routes[i % routes.length], headsign: `Terminus ${i % 17}`,
        direction_id: i % 2, block_id: `B${i % 900}`, departure_time: new Date(day + (i * 20 * 60_000) / (n / 60)).toISOString(), arrival_time: new Date(day + (i * 20 * 60_000) / (n / 60) + 2_400_000).toISOString(),
        status: statuses[i % 6], delay_seconds: (i * 37) % 900 - 120, started_at: null, ended_at: null, recorded_stops: 10, planned_stops: 20,
        vehicle_ids: [`bus-${100 + (i % 46)}`], driver_ids: [], device_ids: [],
      }));
      const load: number[] = [];
      const live: number[] = [];
      for (let round = 0; round < 5; round++) {
        c.store.trips = trips.map((t) => ({ ...t }));
        let t0 = performance.now();
        c.trips.update();
        await new Promise((r) => (globalThis as any).requestAnimationFrame(r));
        load.push(performance.now() - t0);
        for (let k = 0; k < 3000; k++) c.store.trips[(k * 7 + round) % n].delay_seconds += 60;
        c.trips.sort = { key: 'delay', desc: true };
        t0 = performance.now();
        c.trips.update();
        await new Promise((r) => (globalThis as any).requestAnimationFrame(r));
        live.push(performance.now() - t0);
        c.trips.sort = { key: 'departure', desc: false };
      }
      return { load, live, rows: (globalThis as any).document.querySelectorAll('[data-testid=trips-table] tbody tr[data-trip]').length };
    }, TRIPS);

    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const fmt = (xs: number[]) => `median ${med(xs).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.map((x) => x.toFixed(0)).join(', ')})`;
    const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
    console.log(`bench:console ${new Date().toISOString()} (load average ${load}; Chromium ${browser.version()}, SwiftShader WebGL)`);
    console.log(`map: headway flags with ${TRIPS} trips in the store (schedule indexed + flags of ${VEHICLES} vehicles): ${map.flags.toFixed(1)} ms, ${map.flagged} flagged`);
    console.log(`map: full redraw of ${VEHICLES} vehicles, every one moved (store → flags → setData → idle): ${fmt(map.full)}; ${map.drawn} features in the source`);
    console.log(`map: live update, 10% of ${VEHICLES} vehicles moved (store → flags → diff → updateData → idle): ${fmt(map.live)}`);
    console.log(`trips table: ${TRIPS} trips loaded (filter, sort, ${table.rows} rows in sight → next frame): ${fmt(table.load)}`);
    console.log(`trips table: live update of 3,000 delays, sorted by delay: ${fmt(table.live)}`);
  } finally {
    await browser.close();
    await app.close();
    await db.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
