/**
 * npm run test:browser (second part): the control room's console (/console/) in headless Chromium
 * (Debian's chromium package, driven by playwright-core; WebGL by SwiftShader). A service on an
 * embedded database with the demo network; the service and the simulator share one clock running
 * 20 times faster than real time from 08:00 today, so trips start, run and end while the test
 * watches. Checked, each against the API (the truth the console must show):
 * - the operator's map draws the vehicles on duty (rendered by MapLibre) and they move;
 * - today's trips: the table lists the API's trips, filters by route to the API's count, sorts by
 *   delay, and follows the day (trips completing while it is open);
 * - a trip's story shows its stops, the delay chart and the predictions ahead;
 * - the operator cancels a trip in the console and the GTFS-Realtime TripUpdates feed (protobuf)
 *   carries it as CANCELED at the next refresh;
 * - the operator draws a detour on the map (two clicks, the stops between left out) and publishes
 *   it: TripModifications carries the trip with the detour's shape;
 * - the string-line of a route draws scheduled and actual lines; the dashboard shows the stats
 *   endpoints' numbers, and its CSV holds the same numbers;
 * - a reader sees no action button, and the API answers 403 to the same action;
 * - the nord-limited reader sees no vehicle of team sud, on the map or in the trips;
 * - logging out closes the live stream and the session;
 * - axe-core finds no serious or critical violation on any view.
 * Screenshots of each view: test-artifacts/console-*.png (git-ignored).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import GtfsRealtimeBindings from 'gtfs-realtime-bindings';
import protobuf from 'protobufjs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { demoAccount } from '../../src/domains/demo/load.js';
import { loadDemo } from '../../src/domains/demo/load.js';
import { DEMO_TIMEZONE } from '../../src/domains/demo/network.js';
import { Simulator, acceleratedClock } from '../../src/domains/demo/simulator.js';
import { openPglite } from '../../src/platform/db/pglite.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { instantOf, localDate } from '../../src/platform/time.js';
import type { Role } from '../../src/platform/http/access.js';
import { PROTO_PATH } from '../../src/domains/feeds/gtfs-rt/proto.js';
import { CHROMIUM, CHROMIUM_FLAGS } from './chromium.js';

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WAIT = { timeout: 90_000 };
/** How long a feed may take to carry an update: its snapshot is rebuilt in the background, which on
 * this loaded machine (the simulator catching up, other work) took over a minute (it was 60 s and
 * ran out once while the snapshot was still being rebuilt). */
const FEED_WAIT_MS = 240_000;

// Functions passed to the page run there (the project's TypeScript has no DOM library: the page's
// globals are reached through globalThis, untyped).

let base = '';
/** Requests a page made to anything but the service: the console must work offline. */
const external: string[] = [];
const step = (m: string) => console.log(`· ${m}`);

async function call(token: string, path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${base}/api/v4/groups/demo${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    body: init.body ? JSON.stringify(init.body) : null,
  });
  return { status: res.status, json: res.headers.get('content-type')?.includes('json') ? await res.json() : null };
}

async function loginApi(role: Role): Promise<string> {
  const a = demoAccount(role);
  const res = await fetch(`${base}/api/v4/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email: a.email, password: a.password }).toString() });
  return ((await res.json()) as { session_id: string }).session_id;
}

const pages: Page[] = [];

async function openConsole(browser: Browser, role: Role): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  pages.push(page);
  page.on('pageerror', (err) => console.error(`page error (${role}): ${err.message}`));
  page.on('dialog', (d) => void d.accept());
  page.on('request', (r) => {
    if (!/^(data|blob):/.test(r.url()) && !r.url().startsWith(`${base}/`) && !r.url().startsWith(base.replace('http', 'ws'))) external.push(r.url());
  });
  await page.goto(`${base}/console/`);
  const a = demoAccount(role);
  await page.fill('input[name=email]', a.email);
  await page.fill('input[name=password]', a.password);
  await page.click('form#login button[type=submit]');
  await page.waitForFunction(() => (globalThis as any).transitConsole?.store?.network && (globalThis as any).document.getElementById('status').textContent === 'live', undefined, WAIT);
  return page;
}

async function shot(page: Page, name: string) {
  await page.screenshot({ path: new URL(`console-${name}.png`, ARTIFACTS).pathname });
}

/** axe-core on the page as it is: no serious or critical violation. */
async function axe(page: Page, view: string) {
  await page.evaluate(AXE_SOURCE);
  const violations: { id: string; impact: string; nodes: unknown[] }[] = await page.evaluate(async () => (await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] })).violations);
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  console.log(`  axe ${view}: ${violations.length} violations (${violations.map((v) => `${v.id}/${v.impact}`).join(', ') || 'none'})`);
  assert.deepEqual(bad.map((v) => v.id), [], `no serious or critical accessibility violation on ${view}`);
}

const go = (page: Page, hash: string) => page.evaluate((h: string) => {
  (globalThis as any).location.hash = h;
}, hash);

async function main() {
  mkdirSync(ARTIFACTS, { recursive: true });
  const db = await openPglite('memory://');
  await migrate(db);
  const today = localDate(new Date(), DEMO_TIMEZONE);
  const now = acceleratedClock(instantOf(today, 8 * 3600, DEMO_TIMEZONE), 20);
  const app = await buildApp({ config: testConfig(), db, logger: false, clock: { now } });
  await loadDemo(app.ctx);
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const sim = new Simulator({ baseUrl: base, now, log: (m) => console.error(m) });
  await sim.start();
  sim.run(1000);
  console.log(`service on ${base}; simulator caught up with 08:00 (${sim.stats.accepted} reports)`);
  const operatorToken = await loginApi('operator');
  const date8 = today.replace(/-/g, '');

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
  try {
    // ---------------------------------------------------------------- the operator
    const login = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    await login.goto(`${base}/console/`);
    await login.waitForSelector('form#login:not([hidden])');
    await axe(login, 'login');
    await login.close();

    const page = await openConsole(browser, 'operator');
    step('map');
    await page.waitForFunction(() => (globalThis as any).transitConsole.map.map?.queryRenderedFeatures({ layers: ['vehicles'] }).length > 0, undefined, WAIT);
    const positions = () => page.evaluate(() => Object.fromEntries((globalThis as any).transitConsole.map.map.queryRenderedFeatures({ layers: ['vehicles'] }).map((f: any) => [f.properties.device_id, f.geometry.coordinates.join(',')])));
    const before: Record<string, string> = await positions();
    const onDuty = (await call(operatorToken, '/live-map/vehicles')).json as { device_id: string; position: unknown }[];
    console.log(`  ${Object.keys(before).length} vehicles drawn; the API has ${onDuty.filter((v) => v.position).length} with a position`);
    assert.ok(Object.keys(before).length > 0, 'vehicles are drawn on the map');
    await page.waitForFunction((prev: Record<string, string>) => (globalThis as any).transitConsole.map.map.queryRenderedFeatures({ layers: ['vehicles'] })
      .some((f: any) => prev[f.properties.device_id] !== undefined && prev[f.properties.device_id] !== f.geometry.coordinates.join(',')), before, WAIT);
    console.log('  vehicles moved on the map');
    await shot(page, 'map');
    await axe(page, 'map');

    step("today's trips");
    await go(page, '#trips');
    await page.waitForSelector('[data-testid=trips-table] tbody tr[data-trip]', WAIT);
    const apiTrips = (await call(operatorToken, `/trips?date=${date8}`)).json as { id: string; route_id: string; status: string }[];
    const countText = async () => (await page.textContent('[data-testid=trip-count]')) ?? '';
    assert.match(await countText(), new RegExp(`^${apiTrips.length} of ${apiTrips.length} trips`), 'the table counts every trip of the day');
    await page.selectOption('#view-trips select[name=route]', 'L2');
    const l2 = apiTrips.filter((t) => t.route_id === 'L2').length;
    await page.waitForFunction((n: number) => ((globalThis as any).document.querySelector('[data-testid=trip-count]').textContent as string).startsWith(`${n} of`), l2, WAIT);
    const ids = await page.$$eval('[data-testid=trips-table] tbody tr[data-trip]', (rows) => rows.map((r) => r.getAttribute('data-trip')));
    assert.ok(ids.length > 0 && ids.every((id) => id?.startsWith('L2-')), 'filtered by route: only L2 trips');
    await page.selectOption('#view-trips select[name=route]', '');
    await page.click('button[data-sort=delay]');
    const delays = (await page.$$eval('[data-testid=trips-table] tbody tr[data-trip] td.delay', (cells) => cells.map((c) => c.getAttribute('data-delay')))).filter((d) => d !== '').map(Number);
    assert.ok(delays.length > 1, 'trips with a delay');
    assert.deepEqual(delays, [...delays].sort((a, b) => b - a), 'sorted by delay, largest first');
    await page.selectOption('#view-trips select[name=status]', 'completed');
    const completed = async () => Number((await countText()).split(' ')[0]);
    const completedBefore = await completed();
    await page.waitForFunction((n: number) => Number(((globalThis as any).document.querySelector('[data-testid=trip-count]').textContent as string).split(' ')[0]) > n, completedBefore, WAIT);
    console.log(`  ${apiTrips.length} trips; completed went from ${completedBefore} to ${await completed()} while the table was open`);
    await page.selectOption('#view-trips select[name=status]', '');
    await shot(page, 'trips');
    await axe(page, 'trips');

    step("a trip's story");
    await page.selectOption('#view-trips select[name=status]', 'in_progress');
    await page.waitForSelector('[data-testid=trips-table] tbody tr[data-status=in_progress] a', WAIT);
    const running = await page.getAttribute('[data-testid=trips-table] tbody tr[data-status=in_progress]', 'data-trip');
    await page.click('[data-testid=trips-table] tbody tr[data-status=in_progress] a');
    await page.waitForSelector('[data-testid=trip-stops] tr[data-stop-status=passed]', WAIT);
    await page.waitForSelector('[data-testid=delay-chart] canvas', WAIT);
    const title = await page.textContent('[data-testid=trip-title]');
    assert.ok(title?.includes(running!), 'the story of the clicked trip');
    assert.ok(await page.$('[data-testid=actions] button[data-action=cancel]'), 'an operator sees the actions');
    // The predictions ahead: a trip in progress whose object carries some (the API is the truth),
    // the one with the most stops ahead, so that it is still running when its story opens (one a
    // stop from its end may be over by then on a loaded machine).
    let predicted: { id: string; predictions: unknown[] } | undefined;
    for (const deadline = Date.now() + 60_000; !predicted && Date.now() < deadline;) {
      const inProgress = ((await call(operatorToken, `/trips?date=${date8}`)).json as { id: string; status: string }[]).filter((t) => t.status === 'in_progress').slice(0, 8);
      for (const t of inProgress) {
        const o = (await call(operatorToken, `/trips/${t.id}?date=${today}`)).json as { id: string; predictions: unknown[] };
        if (o.predictions.length > (predicted?.predictions.length ?? 0)) predicted = o;
      }
    }
    assert.ok(predicted, 'a trip in progress has predictions');
    // Opened anew, through the trips view: when it is the trip clicked above (a Sunday's few trips
    // in progress), setting the same hash again fires no hashchange and the story shown stays the
    // one read at the click, perhaps before its first prediction.
    await go(page, '#trips');
    await page.waitForSelector('[data-testid=trips-table] tbody tr[data-trip]', WAIT);
    await go(page, `#trip/${predicted.id}/${today}`);
    await page.waitForSelector('[data-testid=prediction]', WAIT);
    console.log(`  ${running}: story opened from the table; ${predicted.id}: ${await page.$$eval('[data-testid=prediction]', (c) => c.length)} stops ahead with a prediction`);
    await shot(page, 'trip');
    await axe(page, 'trip');

    step('the operator cancels a trip; GTFS-RT carries it');
    // A trip later today, so the running service is untouched.
    const later = apiTrips.find((t) => t.status === 'scheduled' && t.route_id === 'L3')!;
    await go(page, `#trip/${later.id}/${today}`);
    await page.waitForFunction((id: string) => ((globalThis as any).document.querySelector('[data-testid=trip-title]')?.textContent ?? '').includes(id), later.id, WAIT);
    await page.click('[data-testid=actions] button[data-action=cancel]');
    await page.waitForFunction(() => ((globalThis as any).document.querySelector('[data-testid=action-result]')?.textContent ?? '').endsWith('done.'), undefined, WAIT);
    await page.waitForFunction(() => ((globalThis as any).document.querySelector('[data-testid=trip-updates]')?.textContent ?? '').includes('cancelled'), undefined, WAIT);
    const deadline = Date.now() + FEED_WAIT_MS;
    let cancelled = false;
    while (!cancelled && Date.now() < deadline) {
      const res = await fetch(`${base}/api/v4/groups/demo/gtfs-rt/trip-updates`);
      const feed = GtfsRealtimeBindings.transit_realtime.FeedMessage.decode(new Uint8Array(await res.arrayBuffer()));
      cancelled = feed.entity.some((e) => e.tripUpdate?.trip.tripId === later.id && e.tripUpdate.trip.scheduleRelationship === GtfsRealtimeBindings.transit_realtime.TripDescriptor.ScheduleRelationship.CANCELED);
      if (!cancelled) await new Promise((r) => setTimeout(r, 1000));
    }
    assert.ok(cancelled, `trip ${later.id} is CANCELED in the GTFS-RT TripUpdates feed`);
    console.log(`  ${later.id} cancelled in the console, CANCELED in GTFS-RT`);

    step('the detour editor: drawn in the console, in GTFS-RT TripModifications');
    const detoured = apiTrips.find((t) => t.status === 'scheduled' && t.route_id === 'L1')!;
    await go(page, `#trip/${detoured.id}/${today}`);
    await page.waitForFunction((id: string) => ((globalThis as any).document.querySelector('#view-trip [data-testid=trip-title]')?.textContent ?? '').includes(id), detoured.id, WAIT);
    await page.click('[data-testid=actions] a[data-action=detour]');
    await page.waitForFunction(() => (globalThis as any).transitConsole.detour.map?.getSource('detour') && (globalThis as any).transitConsole.detour.map.loaded(), undefined, WAIT);
    const box = (await page.locator('#detour-map canvas').boundingBox())!;
    await page.mouse.click(box.x + box.width * 0.45, box.y + box.height * 0.4);
    await page.mouse.click(box.x + box.width * 0.55, box.y + box.height * 0.45);
    await page.waitForFunction(() => ((globalThis as any).document.querySelector('[data-testid=detour-points]')?.textContent ?? '').startsWith('2 point(s)'), undefined, WAIT);
    const leftOut: number[] = await page.evaluate(() => (globalThis as any).transitConsole.detour.skipped());
    assert.ok(leftOut.length > 0, 'the stops between the two chosen are left out');
    await shot(page, 'detour');
    await axe(page, 'detour');
    await page.click('button[data-action=detour]');
    await page.waitForFunction(() => ((globalThis as any).document.querySelector('[data-testid=detour-result]')?.textContent ?? '').startsWith('Detour published'), undefined, WAIT);
    const FeedMessage = protobuf.loadSync(PROTO_PATH).lookupType('transit_realtime.FeedMessage');
    let modified: any;
    for (const deadline = Date.now() + FEED_WAIT_MS; !modified && Date.now() < deadline;) {
      const res = await fetch(`${base}/api/v4/groups/demo/gtfs-rt/trip-modifications`);
      const feed = FeedMessage.toObject(FeedMessage.decode(new Uint8Array(await res.arrayBuffer())), { enums: String, longs: Number }) as { entity?: any[] };
      modified = feed.entity?.find((e) => e.tripModifications?.selectedTrips?.some((t: any) => t.tripIds?.includes(detoured.id)));
      if (!modified) await new Promise((r) => setTimeout(r, 1000));
    }
    assert.ok(modified, `trip ${detoured.id} is in the GTFS-RT TripModifications feed`);
    assert.ok(modified.tripModifications.selectedTrips[0].shapeId, 'with the detour\'s shape');
    console.log(`  ${detoured.id}: detour drawn with 2 points, ${leftOut.length} stops left out, in TripModifications (shape ${modified.tripModifications.selectedTrips[0].shapeId})`);

    step('string-line');
    // What the string-line reads: the schedule, the trip events and the GTFS-RT predictions, in a
    // bounded number of requests (never one per trip).
    const read: string[] = [];
    const reads = (r: { url(): string }) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith('/api/v4/groups/demo/')) read.push(u.pathname.slice('/api/v4/groups/demo'.length));
    };
    page.on('request', reads);
    await go(page, '#stringline');
    await page.selectOption('#view-stringline select[name=route]', 'L1');
    await page.waitForFunction(() => Number((globalThis as any).document.getElementById('view-stringline').dataset.actual) > 0 && Number((globalThis as any).document.getElementById('view-stringline').dataset.scheduled) > 0, undefined, WAIT);
    await page.waitForSelector('[data-testid=stringline-chart] canvas', WAIT);
    page.off('request', reads);
    const requests = Number(await page.evaluate(() => (globalThis as any).document.getElementById('view-stringline').dataset.requests));
    assert.ok(read.includes('/schedule') && read.includes('/trip-events') && read.includes('/gtfs-rt/trip-updates'), `the string-line reads schedule, trip-events and gtfs-rt/trip-updates (read: ${[...new Set(read)].join(', ')})`);
    assert.ok(!read.some((p) => p.startsWith('/trips/')), 'no request per trip');
    assert.ok(requests >= 3 && requests <= 10, `a redraw takes a bounded number of requests (${requests})`);
    console.log(`  ${await page.textContent('[data-testid=stringline-note]')} (${requests} requests for the last redraw)`);
    await shot(page, 'stringline');
    await axe(page, 'stringline');

    step('dashboard');
    await go(page, '#dashboard');
    await page.waitForSelector('[data-testid=dashboard-summary]', WAIT);
    const start = await page.inputValue('input[name=start]');
    const stats = (await call(operatorToken, `/stats/trip-tracking?start_date=${start}&end_date=${today}`)).json as { total: { stop_passages: number }; by_day: { service_date: string; stop_passages: number; punctuality_percent: number | null }[] };
    const summary = (await page.textContent('[data-testid=dashboard-summary]')) ?? '';
    const shown = Number(/(\d+) stop passages/.exec(summary)?.[1]);
    // The service keeps running between the two reads: the page's figure is at most the later one.
    assert.ok(shown > 0 && shown <= stats.total.stop_passages, `the summary shows the endpoint's stop passages (${shown}, API ${stats.total.stop_passages} a moment later)`);
    const href = (await page.getAttribute(`a[download="punctuality_${start}_${today}.csv"]`, 'href')) ?? '';
    const rows = decodeURIComponent(href.replace(/^data:text\/csv;charset=utf-8,/, '')).trim().split('\r\n');
    assert.equal(rows[0], 'service_date,stop_passages,early,on_time,late,punctuality_percent', 'the CSV header');
    assert.deepEqual(rows.slice(1).map((r) => r.split(',')[0]), stats.by_day.map((d) => d.service_date), 'one CSV line per day of the endpoint');
    await page.waitForSelector('[data-testid=chart-punctuality] canvas', WAIT);
    await shot(page, 'dashboard');
    await axe(page, 'dashboard');

    step('logout closes the stream');
    const stream = await page.evaluateHandle(() => (globalThis as any).transitConsole.stream);
    const token = await page.evaluate(() => JSON.parse((globalThis as any).sessionStorage.getItem('transit-ops-console')).token as string);
    await page.click('#logout');
    await page.waitForFunction((s: any) => s.ws.readyState === 3, stream, WAIT);
    assert.equal((await call(token, '/roles')).status, 401, 'the session is closed');
    await page.close();

    // ---------------------------------------------------------------- a reader
    step('reader: no action, and the API refuses it');
    const reader = await openConsole(browser, 'reader');
    const trip = apiTrips.find((t) => t.status === 'scheduled' && t.route_id === 'L4')!;
    await go(reader, `#trip/${trip.id}/${today}`);
    await reader.waitForSelector('[data-testid=trip-stops]', WAIT);
    assert.equal(await reader.$('[data-testid=actions]'), null, 'a reader sees no actions');
    assert.equal((await reader.$$('button[data-action]')).length, 0, 'a reader sees no action button');
    const readerToken = await reader.evaluate(() => JSON.parse((globalThis as any).sessionStorage.getItem('transit-ops-console')).token as string);
    const refused = await call(readerToken, '/trip-updates', { method: 'PUT', body: { update_id: 'reader-try', kind: 'cancel', trip_id: trip.id, start_date: today, end_date: today } });
    assert.equal(refused.status, 403, 'the API refuses the reader\'s cancellation');
    await shot(reader, 'reader-trip');
    await reader.close();

    // ---------------------------------------------------------------- nord only
    step('the nord-limited reader sees no sud vehicle');
    const vehicles = (await call(operatorToken, '/vehicles')).json as { id: string; teams: string[] }[];
    const sud = new Set(vehicles.filter((v) => v.teams.includes('sud') && !v.teams.includes('nord')).map((v) => v.id));
    assert.ok(sud.size > 0, 'the demo has vehicles of team sud only');
    const limited = await openConsole(browser, 'limited_reader');
    await limited.waitForFunction(() => (globalThis as any).transitConsole.map.map?.queryRenderedFeatures({ layers: ['vehicles'] }).length > 0, undefined, WAIT);
    const drawn: string[] = await limited.evaluate(() => (globalThis as any).transitConsole.map.map.queryRenderedFeatures({ layers: ['vehicles'] }).map((f: any) => f.properties.vehicle_id));
    const known: string[] = await limited.evaluate(() => [...(globalThis as any).transitConsole.store.vehicles.values()].map((v: any) => v.vehicle_id));
    assert.deepEqual([...drawn, ...known].filter((v) => sud.has(v)), [], 'no sud vehicle on the map');
    await go(limited, '#trips');
    await limited.waitForSelector('[data-testid=trips-table] tbody tr[data-trip]', WAIT);
    const tripVehicles: string[] = await limited.evaluate(() => (globalThis as any).transitConsole.store.trips.flatMap((t: any) => t.vehicle_ids));
    assert.ok(tripVehicles.length > 0 && tripVehicles.every((v) => !sud.has(v)), 'no trip of a sud vehicle in the table');
    console.log(`  ${new Set(drawn).size} vehicles drawn, ${tripVehicles.length} trip vehicles, none of the ${sud.size} sud vehicles`);
    await shot(limited, 'nord-map');
    await limited.close();
  } catch (err) {
    // What the open pages showed when it failed.
    for (const [i, p] of pages.entries()) {
      if (p.isClosed()) continue;
      console.error(`page ${i}: ${p.url()} status: ${await p.textContent('#status').catch(() => '?')}`);
      await p.screenshot({ path: new URL(`console-failure-${i}.png`, ARTIFACTS).pathname }).catch(() => {});
    }
    throw err;
  } finally {
    await browser.close();
    await sim.stop();
    await app.close();
    await db.close();
  }
  assert.deepEqual(external, [], 'the console asked nothing of another origin (no CDN, no tiles, no fonts)');
  assert.equal(sim.stats.rejected, 0, 'the service rejected none of the simulated reports');
  console.log('console browser test passed');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
