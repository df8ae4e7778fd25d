/**
 * Acceptance (issue: the device API): a day of a device replayed with duplicated, reordered and
 * late batches, then the same delivery a second time: the stored rows equal the distinct items,
 * and the duties and the latest state are those of the day as it happened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newUser, setup, type TestApp } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send, type Item } from '../helpers/actual.js';

let t: TestApp;
beforeAll(async () => {
  t = await setup();
});
afterAll(async () => t?.close());

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('a day of a device, delivered badly', () => {
  it('stores each distinct item once and derives the day as it happened', async () => {
    const g = await newGroup(t);
    const op = await newUser(t, { groupId: g, role: 'operator' });
    const morning = await newDriver(t, g, { code: '100' });
    const afternoon = await newDriver(t, g, { code: '200' });
    const bus1 = await newVehicle(t, g);
    const bus2 = await newVehicle(t, g);
    const dev = await newDevice(t, g);
    const base = Date.parse('2026-06-15T04:00:00Z');
    const at = (minutes: number) => new Date(base + minutes * 60_000);
    const day = '2026-06-15';

    // The day as it happened, in time order.
    const items: Item[] = [];
    items.push(item('device_state', at(0), { state: { app_version: '3.1.0', battery_pct: 100, network: '4g' } }));
    items.push(item('sign_on', at(5), { driver_code: '100', vehicle_id: bus1, odometer_km: 1000 }));
    let minute = 10;
    for (const [trip, swap] of [['T1', false], ['T2', false], ['T3', true], ['T4', false]] as const) {
      if (swap) {
        items.push(item('sign_off', at(minute), { non_commercial_km: 4.2 }));
        items.push(item('sign_on', at(minute + 5), { driver_code: '200', vehicle_id: bus2 }));
        minute += 10;
      }
      items.push(item('trip_start', at(minute), { trip_id: trip, service_date: day }));
      for (let s = 1; s <= 10; s++) {
        minute += 3;
        items.push(item('trip_event', at(minute), { trip_id: trip, service_date: day, event: 'stop_passed', stop_id: `S${s}`, stop_sequence: s, lat: 45 + s / 100, lon: 4 + s / 100, gps_valid: s !== 5 }));
        items.push(item('position', at(minute), { lat: 45 + s / 100, lon: 4 + s / 100, gps_valid: true, trip_id: trip, service_date: day }));
        items.push(item('passenger_count', at(minute), { trip_id: trip, service_date: day, stop_id: `S${s}`, stop_sequence: s, door: 1, counts: [{ category: 'adults', boardings: s, alightings: 1 }] }));
      }
      items.push(item('trip_end', at(minute + 1), { trip_id: trip, service_date: day }));
      items.push(item('device_state', at(minute + 1), { state: { battery_pct: 90 - minute / 10 } }));
      minute += 10;
    }
    items.push(item('vehicle_movement', at(minute), { kind: 'to_depot', service_date: day, origin: { stop_id: 'S10' }, destination: { depot_id: 'D1' }, started_at: at(minute).toISOString(), ended_at: at(minute + 20).toISOString(), distance_km: 7.5 }));
    items.push(item('sign_off', at(minute + 25), { non_commercial_km: 8 }));
    const states = items.filter((i) => i.type === 'device_state').map((i) => i['state'] as Record<string, unknown>);
    const lastState = { app_version: '3.1.0', network: '4g', battery_pct: states.at(-1)!['battery_pct'] };

    // Delivered badly: batches of 7, shuffled; a third of them sent twice; every batch carries two
    // items of an earlier batch (retries); eight items held back and sent last (late).
    const random = rng(42);
    const late = new Set<number>();
    while (late.size < 8) late.add(Math.floor(random() * items.length));
    const onTime = items.filter((_, i) => !late.has(i));
    const batches: Item[][] = [];
    for (let i = 0; i < onTime.length; i += 7) batches.push(onTime.slice(i, i + 7));
    batches.sort(() => random() - 0.5);
    const delivery: Item[][] = [];
    batches.forEach((b, i) => {
      const retried = i > 0 ? batches[i - 1]!.slice(0, 2) : [];
      delivery.push([...b, ...retried]);
      if (random() < 0.33) delivery.push(b);
    });
    delivery.push(items.filter((_, i) => late.has(i)));

    for (let round = 0; round < 2; round++) {
      for (const batch of delivery) {
        const r = await send(t, g, dev.auth, batch);
        expect(r.status).toBe(200);
        expect(r.json.complete).toBe(true);
      }
    }

    const count = async (table: string) => (await t.db.query<{ n: number }>(`SELECT count(DISTINCT client_id)::int AS n, count(*)::int AS rows FROM ${table} WHERE group_id = $1`, [g]))[0]!;
    const distinct = (type: string) => new Set(items.filter((i) => i.type === type).map((i) => i.id)).size;
    const rows = async (table: string) => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE group_id = $1`, [g]))[0]!.n;
    expect(await rows('positions')).toBe(distinct('position'));
    expect(await rows('trip_events')).toBe(distinct('trip_event'));
    expect(await rows('passenger_counts')).toBe(distinct('passenger_count'));
    expect(await rows('trip_runs')).toBe(distinct('trip_start') + distinct('trip_end'));
    expect(await rows('device_sign_events')).toBe(distinct('sign_on') + distinct('sign_off'));
    expect(await rows('vehicle_movements')).toBe(distinct('vehicle_movement'));
    expect(await rows('device_history_events')).toBe(distinct('device_state') + distinct('sign_on') + distinct('sign_off'));
    expect((await count('positions')).n).toBe(distinct('position'));

    const duties = await inject(t, { url: `/api/v4/groups/${g}/duties?start_date=${day}&end_date=${day}`, headers: op.auth });
    expect(duties.json.map((d: any) => ({ driver: d.driver_id, vehicle: d.vehicle_id, on: d.signed_on_at, off: d.signed_off_at, why: d.end_reason, km: d.non_commercial_km, trips: d.trips.map((x: any) => x.trip_id) }))).toEqual([
      { driver: morning, vehicle: bus1, on: at(5).toISOString(), off: items.find((i) => i.type === 'sign_off')!.at, why: 'sign_off', km: 4.2, trips: ['T1', 'T2'] },
      { driver: afternoon, vehicle: bus2, on: items.filter((i) => i.type === 'sign_on')[1]!.at, off: at(minute + 25).toISOString(), why: 'sign_off', km: 8, trips: ['T3', 'T4'] },
    ]);
    expect(duties.json.every((d: any) => d.trips.every((x: any) => x.started_at && x.ended_at))).toBe(true);

    const latest = (await t.db.query<any>('SELECT position_at, lat, lon, state FROM device_latest WHERE group_id = $1 AND device_id = $2', [g, dev.deviceId]))[0];
    const lastPosition = items.filter((i) => i.type === 'position').at(-1)!;
    expect(latest.position_at.toISOString()).toBe(lastPosition.at);
    expect([latest.lat, latest.lon]).toEqual([lastPosition['lat'], lastPosition['lon']]);
    expect(latest.state).toEqual(lastState);
    const history = await inject(t, { url: `/api/v4/groups/${g}/devices/${dev.deviceId}/history`, headers: op.auth });
    expect(history.json.state).toEqual(lastState);
    const midday = await inject(t, { url: `/api/v4/groups/${g}/devices/${dev.deviceId}/history?at=${Math.floor(at(30).getTime() / 1000)}`, headers: op.auth });
    expect(midday.json.state).toMatchObject({ driver_id: morning, vehicle_id: bus1, app_version: '3.1.0' });

    const movements = await inject(t, { url: `/api/v4/groups/${g}/vehicle-movements?date=${day.replace(/-/g, '')}`, headers: op.auth });
    expect(movements.json).toEqual([expect.objectContaining({ kind: 'to_depot', vehicle_id: bus2, driver_id: afternoon, distance_km: 7.5 })]);
  });
});
