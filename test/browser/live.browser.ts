/**
 * npm run test:browser: the live network page in headless Chromium (Debian's chromium package,
 * driven by playwright-core). A service on an embedded database with the demo network, the
 * simulator running 20 times faster than real time from 08:00 today; the page logs in with the
 * demo operator account, vehicles appear on the map and move, the side list shows trips with
 * their delay, a click on a trip shows its vehicle's duty. A screenshot is kept in
 * test-artifacts/live.png.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { demoAccount, loadDemo } from '../../src/domains/demo/load.js';
import { DEMO_TIMEZONE } from '../../src/domains/demo/network.js';
import { Simulator, acceleratedClock } from '../../src/domains/demo/simulator.js';
import { openPglite } from '../../src/platform/db/pglite.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { instantOf, localDate } from '../../src/platform/time.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);

async function main() {
  const db = await openPglite('memory://');
  await migrate(db);
  const app = await buildApp({ config: testConfig(), db, logger: false });
  await loadDemo(app.ctx);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const today = localDate(new Date(), DEMO_TIMEZONE);
  const sim = new Simulator({ baseUrl: base, now: acceleratedClock(instantOf(today, 8 * 3600, DEMO_TIMEZONE), 20), log: (m) => console.error(m) });
  await sim.start();
  sim.run(1000);
  console.log(`service on ${base}; simulator caught up with 08:00 (${sim.stats.accepted} reports)`);

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
    await page.goto(`${base}/live`);
    await page.fill('input[name=password]', demoAccount('operator').password);
    await page.click('form#login button[type=submit]');

    await page.waitForSelector('[data-testid=vehicle]', { timeout: 60_000 });
    const where = () => page.$$eval('[data-testid=vehicle]', (nodes) => Object.fromEntries(nodes.map((n) => [n.getAttribute('data-vehicle'), n.getAttribute('transform')])));
    const before = await where();
    assert.ok(Object.keys(before).length > 0, 'vehicles appear on the map');
    console.log(`${Object.keys(before).length} vehicles on the map`);

    // Functions run in the page (CDP, not eval: the page's Content-Security-Policy forbids eval);
    // the project's TypeScript has no DOM library, hence the untyped document.
    await page.waitForFunction(
      (prev: Record<string, string | null>) => {
        const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ getAttribute(a: string): string | null }> } }).document;
        return Array.from(doc.querySelectorAll('[data-testid=vehicle]')).some((n) => {
          const was = prev[n.getAttribute('data-vehicle') ?? ''];
          return was !== undefined && was !== n.getAttribute('transform');
        });
      },
      before,
      { timeout: 60_000 },
    );
    const after = await where();
    const moved = Object.keys(before).filter((v) => after[v] !== undefined && after[v] !== before[v]);
    assert.ok(moved.length > 0, 'vehicles move');
    console.log(`${moved.length} vehicles moved`);

    await page.waitForFunction(
      () => ((globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }).document.getElementById('status')?.textContent ?? '').startsWith('live'),
      undefined,
      { timeout: 30_000 },
    );
    await page.waitForSelector('#trips li .delay', { timeout: 30_000 });
    const trips = await page.$$eval('#trips li', (items) => items.map((li) => li.textContent));
    assert.ok(trips.length > 0, 'the side list shows the trips in progress');
    console.log(`side list: ${trips.length} trips, first: ${trips[0]}`);

    await page.click('#trips li');
    await page.waitForSelector('#duty table td', { timeout: 30_000 });
    const duty = await page.textContent('#duty');
    assert.match(duty ?? '', /duty of .+Signed on at/s, 'a click shows the duty: driver and trips');

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL('live.png', ARTIFACTS).pathname });
    console.log('screenshot: test-artifacts/live.png');
  } finally {
    await browser.close();
    await sim.stop();
    await app.close();
    await db.close();
  }
  assert.equal(sim.stats.rejected, 0, 'the service rejected none of the simulated reports');
  console.log('browser test passed');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
