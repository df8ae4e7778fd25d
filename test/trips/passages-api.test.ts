/**
 * Exact passages in real time (issue #17, section 1), end to end: generated tracks whose truth is
 * known (test/helpers/tracks.ts) are posted fix by fix through the device API, in real-time order,
 * with the clock at each fix; after each one the trip object and the GTFS-Realtime trip updates
 * are read (the real-time view), then the final state is checked against the truth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';
import { scenario, type Track } from '../helpers/tracks.js';

const DATE = '2026-03-02'; // Monday; Europe/Paris at +01:00: 08:00 local = 07:00Z
const line = scenario('line', 7); // layover 06:50–07:00Z at S1, then five stops over 3.3 km; scheduled at 08:00 local
// The last stop 40 m from the one before, 240 m around the loop; layover 07:50–08:00Z, scheduled at 09:00 local.
const loop = scenario('terminalLoop', 7, { layoverS: 600, layoverFrom: new Date(`${DATE}T07:50:00Z`) });

function feedOf(tracks: Record<string, [Track, number]>): Record<string, string> {
  const stops: string[] = ['stop_id,stop_name,stop_lat,stop_lon'];
  const shapes: string[] = ['shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence'];
  const trips: string[] = ['route_id,service_id,trip_id,trip_headsign,direction_id,block_id,shape_id'];
  const times: string[] = ['trip_id,arrival_time,departure_time,stop_id,stop_sequence'];
  for (const [trip, [tr, hour]] of Object.entries(tracks)) {
    tr.stops.forEach((s, k) => stops.push(`${trip}-S${k + 1},Stop ${k + 1},${s.lat},${s.lon}`));
    tr.shape.forEach((p, k) => shapes.push(`SH-${trip},${p.lat},${p.lon},${k + 1}`));
    trips.push(`R1,WK,${trip},End,0,B-${trip},SH-${trip}`);
    // Scheduled: at the hour (local) at the first stop, then a stop every two minutes.
    tr.stops.forEach((_, k) => {
      const hhmm = `${String(hour).padStart(2, '0')}:${String(2 * k).padStart(2, '0')}:00`;
      times.push(`${trip},${hhmm},${hhmm},${trip}-S${k + 1},${k + 1}`);
    });
  }
  return { 'stops.txt': stops.join('\n') + '\n', 'shapes.txt': shapes.join('\n') + '\n', 'trips.txt': trips.join('\n') + '\n', 'stop_times.txt': times.join('\n') + '\n' };
}

const clock = fixedClock(`${DATE}T06:00:00Z`);
let t: TestApp;
let g: string;
let operator: TestUser;
beforeAll(async () => {
  t = await setup({ clock });
  g = await newGroup(t);
  operator = await newUser(t, { groupId: g, role: 'operator' });
  await importZip(t, g, minimalZip(feedOf({ LINE: [line, 8], LOOP: [loop, 9] })), { publish: true });
});
afterAll(async () => t?.close());

interface Stop {
  stop_sequence: number;
  actual_at: string | null;
  actual_arrival_at: string | null;
  actual_departure_at: string | null;
  delay_seconds: number | null;
  status: string;
}

const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));
const seconds = (iso: string | null, truth: Date) => (Date.parse(iso!) - truth.getTime()) / 1000;

/**
 * Drives a bus along a track through the device API: sign-on, trip_start at the start of the
 * layover (the driver took the trip while waiting), one position per POST, trip_end at the end.
 * After each position, `look` gets the trip object's stops and the trip's GTFS-RT entity.
 */
async function drive(trip: string, tr: Track, look: (fix: number, stops: Stop[], entity: any) => void): Promise<{ stops: Stop[]; trip: any }> {
  const dev = await newDevice(t, g);
  const ref = { trip_id: trip, service_date: DATE };
  const first = tr.fixes[0]!.at;
  clock.set(first);
  const ok = async (items: unknown[]) => expect((await send(t, g, dev.auth, items)).json.rejected).toEqual([]);
  await ok([item('sign_on', new Date(first.getTime() - 60_000), { driver_id: await newDriver(t, g), vehicle_id: await newVehicle(t, g) }), item('trip_start', first, ref)]);
  let object: any = null;
  for (const [i, f] of tr.fixes.entries()) {
    clock.set(f.at);
    await ok([item('position', f.at, { ...ref, lat: f.lat, lon: f.lon, gps_valid: true })]);
    const r = await inject(t, { url: `/api/v4/groups/${g}/trips/${trip}?date=${DATE}`, headers: operator.auth });
    expect(r.status).toBe(200);
    object = r.json;
    const feed = await inject(t, { url: `/api/v4/groups/${g}/gtfs-rt/trip-updates?format=json` });
    expect(feed.status).toBe(200);
    const entity = feed.json.entity?.find((e: any) => e.tripUpdate?.trip?.tripId === trip) ?? null;
    // Timestamps sane: the snapshot (stale-while-revalidate, feeds/cache.ts) built no later than
    // the clock, the trip's observation not in the future. (It can be later than the snapshot's
    // header: a rebuild started at the header's time reads the reports committed while it runs.)
    const built = Number(feed.json.header.timestamp);
    expect(built).toBeLessThanOrEqual(Math.floor(f.at.getTime() / 1000));
    if (entity?.tripUpdate?.timestamp) expect(Number(entity.tripUpdate.timestamp)).toBeLessThanOrEqual(Math.floor(f.at.getTime() / 1000));
    look(i, object.delay as Stop[], entity);
  }
  const last = tr.fixes[tr.fixes.length - 1]!.at;
  await ok([item('trip_end', new Date(last.getTime() + 1000), ref)]);
  clock.set(new Date(last.getTime() + 2000));
  const r = await inject(t, { url: `/api/v4/groups/${g}/trips/${trip}?date=${DATE}`, headers: operator.auth });
  return { stops: r.json.delay, trip: r.json };
}

/** Checks common to every read: nothing published before the truth, times increasing along the trip, GTFS-RT in order. */
function realTimeChecks(tr: Track, i: number, stops: Stop[], entity: any) {
  const now = tr.fixes[i]!.at.getTime();
  const last = stops.length - 1;
  let previous = -Infinity;
  stops.forEach((s, k) => {
    const truth = k === last ? tr.arrivals[k]! : tr.departures[k]!;
    if (s.actual_at !== null) {
      expect(now, `stop ${k + 1} published as passed at fix ${i}, before the bus truly ${k === last ? 'arrived' : 'left'}`).toBeGreaterThanOrEqual(truth.getTime());
      expect(Math.abs(seconds(s.actual_at, truth)), `stop ${k + 1} passage at fix ${i}`).toBeLessThanOrEqual(15);
    }
    // A stop still 40 m or more ahead: neither arrived nor passed.
    if (tr.stops[k]!.along - tr.fixes[i]!.along >= 40) expect([s.actual_arrival_at, s.actual_at], `stop ${k + 1} ahead at fix ${i}`).toEqual([null, null]);
    for (const x of [ms(s.actual_arrival_at), ms(s.actual_departure_at)]) {
      if (x === null) continue;
      expect(x, `times increase along the trip at stop ${k + 1}`).toBeGreaterThanOrEqual(previous);
      previous = x;
    }
  });
  const sequences = (entity?.tripUpdate?.stopTimeUpdate ?? []).map((u: any) => u.stopSequence);
  expect(sequences).toEqual([...sequences].sort((a: number, b: number) => a - b));
}

describe('exact passages in real time, through the device API', () => {
  it('a bus laying over at the first stop has not left it: departure when it leaves (±15 s), arrival and departure at dwelled stops ±15 s, vk within 2 %', async () => {
    let layoverReads = 0;
    let delaysPublished = 0;
    const { stops, trip } = await drive('LINE', line, (i, s, entity) => {
      realTimeChecks(line, i, s, entity);
      if (line.fixes[i]!.at < line.departures[0]!) {
        layoverReads++;
        expect(s[0]!.actual_arrival_at).not.toBeNull(); // at the first stop since the first fix
        expect([s[0]!.actual_departure_at, s[0]!.actual_at, s[0]!.status]).toEqual([null, null, 'pending']);
      }
      // GTFS-RT while the bus lays over (every report so far is from the layover): no delay for the trip.
      if (line.fixes[i]!.at < line.departures[0]!) expect(entity?.tripUpdate?.delay ?? null, 'no delay published while laying over').toBeNull();
      // A published delay is observed at a stop the bus has truly left: the first stop at least. The
      // update lists the stops ahead (with their predictions): those it leaves out were truly left.
      if (entity?.tripUpdate?.delay !== undefined) {
        delaysPublished++;
        const now = line.fixes[i]!.at.getTime();
        expect(now, 'delay published before the bus left its first stop').toBeGreaterThanOrEqual(line.departures[0]!.getTime());
        const firstAhead: number | undefined = entity.tripUpdate.stopTimeUpdate[0]?.stopSequence;
        if (firstAhead !== undefined && firstAhead > 1) {
          expect(now, `stop ${firstAhead - 1} left out as passed before the bus left it`).toBeGreaterThanOrEqual(line.departures[firstAhead - 2]!.getTime());
        }
      }
    });
    expect(delaysPublished).toBeGreaterThan(10);
    expect(layoverReads).toBeGreaterThan(30);
    expect(Math.abs(seconds(stops[0]!.actual_departure_at, line.departures[0]!))).toBeLessThanOrEqual(15);
    expect(Math.abs(stops[0]!.delay_seconds!)).toBeLessThanOrEqual(15); // left at 08:00 local as scheduled
    for (let k = 1; k < stops.length - 1; k++) {
      expect(Math.abs(seconds(stops[k]!.actual_arrival_at, line.arrivals[k]!)), `stop ${k + 1} arrival`).toBeLessThanOrEqual(15);
      expect(Math.abs(seconds(stops[k]!.actual_departure_at, line.departures[k]!)), `stop ${k + 1} departure`).toBeLessThanOrEqual(15);
      expect(stops[k]!.actual_at).toBe(stops[k]!.actual_departure_at);
    }
    const last = stops[stops.length - 1]!;
    expect(Math.abs(seconds(last.actual_arrival_at, line.arrivals[stops.length - 1]!))).toBeLessThanOrEqual(15);
    expect(stops.map((s) => s.status)).toEqual(['passed', 'passed', 'passed', 'passed', 'passed']);
    expect(Math.abs(trip.vk * 1000 - line.drivenM) / line.drivenM).toBeLessThanOrEqual(0.02);
    expect(trip.off_itinerary_km).toBe(0);
  });

  it('terminal loop: the last stop 40 m from the one before is not passed early (±15 s)', async () => {
    const { stops, trip } = await drive('LOOP', loop, (i, s, entity) => realTimeChecks(loop, i, s, entity));
    const n = stops.length - 1;
    expect(Math.abs(seconds(stops[n - 1]!.actual_departure_at, loop.departures[n - 1]!))).toBeLessThanOrEqual(15);
    expect(Math.abs(seconds(stops[n]!.actual_at, loop.arrivals[n]!))).toBeLessThanOrEqual(15);
    expect(Math.abs(trip.vk * 1000 - loop.drivenM) / loop.drivenM).toBeLessThanOrEqual(0.02);
  });
});
