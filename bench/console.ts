/**
 * npm run bench:console: the console's two heavy redraws, measured in the page (headless Debian
 * Chromium, WebGL by SwiftShader: no GPU on this machine, so the map figures are a software
 * renderer's, pessimistic against a desktop with a graphics card).
 * - Map: 5,000 synthetic vehicles (on the demo network's shapes, delays spread so every colour and
 *   flag rule is drawn) given to the vehicles' GeoJSON source; the time from setData to MapLibre's
 *   `idle` (data parsed in the worker, tiles laid out, frame drawn). Five redraws with new
 *   positions, median and max.
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

    const map: number[] = await page.evaluate(async (n: number) => {
      const c = (globalThis as any).transitConsole;
      const shapes: [number, number][][] = c.store.network.routes.flatMap((r: any) => r.shapes);
      const classes = ['early', 'on-time', 'late', 'unknown'];
      const flags = ['', '', '', 'bunching', 'gap'];
      const times: number[] = [];
      for (let round = 0; round < 6; round++) {
        const features = [];
        for (let i = 0; i < n; i++) {
          const s = shapes[i % shapes.length]!;
          const p = s[Math.floor(Math.random() * s.length)]!;
          features.push({ type: 'Feature', properties: { device_id: `d${i}`, vehicle_id: `v${i}`, delay_class: classes[i % 4], flag: flags[i % 5] }, geometry: { type: 'Point', coordinates: [p[0] + (Math.random() - 0.5) * 0.002, p[1] + (Math.random() - 0.5) * 0.002] } });
        }
        const idle = new Promise((resolve) => c.map.map.once('idle', resolve));
        const t0 = performance.now();
        c.map.setVehicles(features);
        await idle;
        if (round > 0) times.push(performance.now() - t0); // the first round warms the worker up
      }
      return times;
    }, VEHICLES);

    await page.evaluate(() => ((globalThis as any).location.hash = '#trips'));
    await page.waitForSelector('[data-testid=trips-table] tbody tr', { timeout: 60_000 });
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
    console.log(`map: full redraw of ${VEHICLES} vehicles (setData → idle): ${fmt(map)}`);
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
