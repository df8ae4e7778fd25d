/**
 * One vehicle's day of reports, as its driver application would send them: sign-on, the run
 * from the depot, each planned trip driven along its shape with a realistic delay (a late start
 * now and then, slower running at peak hours, dwell times that grow with boardings, holding at
 * timepoints when early), trip events at each stop, passenger counts per door, GPS positions,
 * the relief between two drivers, the return to the depot and the sign-off.
 *
 * The day is a pure function of (seed, date, vehicle, planning): every item has a stable UUID,
 * so a restarted simulator sends the same items again and the service acknowledges them as
 * duplicates. Offline windows (a tunnel, a dead zone) hold items back: they are released at the
 * window's end, as the backlog a device replays when it reconnects.
 */
import CheapRuler from 'cheap-ruler';
import { instantOf } from '../../platform/time.js';
import { formatGtfsTime, gtfsSeconds } from '../gtfs/time.js';
import type { DemoNetwork, DemoShape, DemoTrip } from './network.js';
import { between, intBetween, normal, poisson, rngOf, stableUuid, type Rng } from './random.js';

/** A planned piece of work of the vehicle (from GET planning). */
export interface PlannedPiece {
  trip_id: string;
  /** Scheduled first departure in seconds of the service day (the instance's start for a frequency trip). */
  start: number;
  /** Set for a frequency-based trip instance. */
  start_time: string | null;
  driver_id: string;
}

export interface SimItem {
  /** When the device sends it: its time, or the end of the offline window it fell in. */
  release: number;
  item: { id: string; type: string; at: string } & Record<string, unknown>;
}

export interface VehicleDay {
  vehicle_id: string;
  device_id: string;
  items: SimItem[];
  offline: [number, number][];
}

export interface DayOptions {
  seed: number;
  /** Seconds between two GPS positions during a trip. */
  positionEvery: number;
}

const APP_VERSIONS = ['4.11.2', '4.12.0', '4.12.1'];

export function vehicleDay(n: DemoNetwork, serviceDate: string, vehicleId: string, deviceId: string, pieces: readonly PlannedPiece[], o: DayOptions): VehicleDay {
  const r = rngOf(o.seed, serviceDate, vehicleId);
  const ruler = new CheapRuler(n.center[1], 'meters');
  const trips = new Map(n.trips.map((t) => [t.trip_id, t]));
  const shapes = new Map(n.shapes.map((s) => [s.shape_id, s]));
  const stops = new Map(n.stops.map((s) => [s.stop_id, s]));
  const at = (seconds: number) => instantOf(serviceDate, seconds, n.timezone).getTime();
  const items: { at: number; type: string; fields: Record<string, unknown> }[] = [];
  const add = (type: string, t: number, fields: Record<string, unknown> = {}) => items.push({ at: Math.round(t), type, fields });

  const sorted = [...pieces].sort((a, b) => a.start - b.start);
  const duties: PlannedPiece[][] = [];
  for (const p of sorted) {
    const current = duties[duties.length - 1];
    if (current && current[0]!.driver_id === p.driver_id) current.push(p);
    else duties.push([p]);
  }
  let odometer = Math.round(between(r, 40_000, 380_000));
  const capacity = vehicleId.endsWith('1') ? 140 : 90;
  let free = 0; // ms: when the vehicle is free for its next trip
  const appVersion = APP_VERSIONS[intBetween(r, 0, APP_VERSIONS.length - 1)]!;
  let battery = between(r, 70, 100);

  duties.forEach((duty, d) => {
    const firstTrip = trips.get(duty[0]!.trip_id)!;
    const firstStop = stops.get(firstTrip.stop_times[0]!.stop_id)!;
    const signOnAt = Math.max(free + 60_000, at(duty[0]!.start) - intBetween(r, 10, 16) * 60_000);
    add('sign_on', signOnAt, { driver_id: duty[0]!.driver_id, vehicle_id: vehicleId, odometer_km: odometer, info: { app_version: appVersion, checks: 'ok' } });
    add('device_state', signOnAt + 5_000, { state: { app_version: appVersion, battery_pct: Math.round(battery), charging: true, network: '4g', gps_enabled: true } });
    let nonCommercial = 0;
    if (d === 0) {
      const km = Math.round(between(r, 2, 6) * 10) / 10;
      nonCommercial += km;
      odometer += km;
      add('vehicle_movement', at(duty[0]!.start) - 3 * 60_000, {
        kind: 'from_depot', service_date: serviceDate, ...(firstTrip.block_id ? { block_id: firstTrip.block_id } : {}),
        origin: { depot_id: firstTrip.route_id === 'L1' || firstTrip.route_id === 'L2' ? 'nord' : 'sud' },
        destination: { stop_id: firstStop.stop_id, lat: firstStop.lat, lon: firstStop.lon },
        started_at: new Date(signOnAt + 2 * 60_000).toISOString(), ended_at: new Date(at(duty[0]!.start) - 3 * 60_000).toISOString(), distance_km: km,
      });
      add('position', at(duty[0]!.start) - 3 * 60_000, { lat: firstStop.lat, lon: firstStop.lon, gps_valid: true, speed_kmh: 0, odometer_km: round1(odometer) });
    }
    for (const piece of duty) {
      const template = trips.get(piece.trip_id)!;
      const end = driveTrip(r, ruler, template, shapes.get(template.shape_id)!, piece, serviceDate, at, free, capacity, o.positionEvery, odometer, add);
      odometer = end.odometer;
      free = end.arrivedAt;
      battery = Math.max(15, battery - between(r, 0.5, 2));
    }
    const lastTrip = trips.get(duty[duty.length - 1]!.trip_id)!;
    const lastStop = stops.get(lastTrip.stop_times[lastTrip.stop_times.length - 1]!.stop_id)!;
    const signOffAt = free + intBetween(r, 3, 6) * 60_000;
    if (d === duties.length - 1) {
      const km = Math.round(between(r, 2, 6) * 10) / 10;
      nonCommercial += km;
      odometer += km;
      add('vehicle_movement', free + 60_000, {
        kind: 'to_depot', service_date: serviceDate, ...(lastTrip.block_id ? { block_id: lastTrip.block_id } : {}),
        origin: { stop_id: lastStop.stop_id, lat: lastStop.lat, lon: lastStop.lon }, destination: { depot_id: lastTrip.route_id === 'L1' || lastTrip.route_id === 'L2' ? 'nord' : 'sud' },
        started_at: new Date(free + 60_000).toISOString(), ended_at: new Date(signOffAt - 60_000).toISOString(), distance_km: km,
      });
    }
    add('device_state', signOffAt - 10_000, { state: { battery_pct: Math.round(battery), charging: false } });
    add('sign_off', signOffAt, { odometer_km: round1(odometer), non_commercial_km: round1(nonCommercial), info: { remarks: d === duties.length - 1 ? 'end of service' : 'relief' } });
    free = signOffAt;
  });

  items.sort((a, b) => a.at - b.at);
  const offline = offlineWindows(r, items);
  return {
    vehicle_id: vehicleId,
    device_id: deviceId,
    offline,
    items: items.map((it, i) => ({
      release: offline.find(([from, to]) => it.at >= from && it.at < to)?.[1] ?? it.at,
      item: { id: stableUuid(o.seed, serviceDate, vehicleId, i), type: it.type, at: new Date(it.at).toISOString(), ...it.fields },
    })),
  };
}

type Add = (type: string, t: number, fields?: Record<string, unknown>) => void;

function driveTrip(
  r: Rng, ruler: CheapRuler, template: DemoTrip, shape: DemoShape, piece: PlannedPiece, serviceDate: string, at: (s: number) => number,
  free: number, capacity: number, every: number, odometerStart: number, add: Add,
): { arrivedAt: number; odometer: number } {
  const shift = piece.start - template.stop_times[0]!.departure;
  const st = template.stop_times.map((s) => ({ ...s, arrival: s.arrival + shift, departure: s.departure + shift }));
  const ref = { trip_id: piece.trip_id, service_date: serviceDate, ...(piece.start_time ? { start_time: piece.start_time } : {}) };
  const hour = piece.start / 3600;
  const peak = (hour >= 7 && hour < 9) || (hour >= 16.5 && hour < 19);
  // A late start now and then (a late driver, a breakdown), otherwise a minute or so.
  const incident = r() < 0.05 ? between(r, 300, 900) : 0;
  const startDelay = Math.max(-20, normal(r, 40, 50)) + incident;
  let t = Math.max(at(st[0]!.departure) + startDelay * 1000, free + 120_000);
  const odometerAt = (dist: number) => round1(odometerStart + dist / 1000);
  const place = (dist: number): { lat: number; lon: number; bearing: number } => {
    const p = ruler.along(shape.points, dist);
    const ahead = ruler.along(shape.points, Math.min(dist + 15, shape.dists[shape.dists.length - 1]!));
    const b = dist + 15 > shape.dists[shape.dists.length - 1]! ? 0 : ruler.bearing(p, ahead);
    return { lat: round6(p[1]), lon: round6(p[0]), bearing: Math.round((b + 360) % 360) };
  };
  const stopEvent = (event: string, i: number, time: number) => {
    const p = place(st[i]!.dist);
    add('trip_event', time, { ...ref, event, stop_id: st[i]!.stop_id, stop_sequence: st[i]!.stop_sequence, lat: p.lat, lon: p.lon, gps_valid: r() > 0.02, odometer_km: odometerAt(st[i]!.dist) });
  };
  add('trip_start', t - 60_000, { ...ref, ...(template.block_id ? { block_id: template.block_id } : {}) });
  stopEvent('departure', 0, t);
  let load = poisson(r, peak ? 12 : 5);
  countAt(r, add, ref, st[0]!, t, load, 0, capacity);
  for (let i = 1; i < st.length; i++) {
    const planned = (st[i]!.arrival - st[i - 1]!.departure) * 1000;
    const factor = Math.min(1.6, Math.max(0.85, normal(r, peak ? 1.06 : 0.98, 0.07)));
    const arrive = t + planned * factor;
    positions(r, add, ref, t, arrive, st[i - 1]!.dist, st[i]!.dist, every, place, odometerAt);
    const lastStop = i === st.length - 1;
    if (lastStop) {
      stopEvent('arrival', i, arrive);
      countAt(r, add, ref, st[i]!, arrive, 0, load, capacity);
      add('trip_end', arrive + 30_000, ref);
      return { arrivedAt: arrive, odometer: odometerAt(st[i]!.dist) };
    }
    stopEvent('stop_passed', i, arrive);
    const rush = peak ? 2.2 : 1;
    const alight = Math.min(load, poisson(r, load * 0.18));
    const board = Math.min(capacity - load + alight, poisson(r, rush * (st[i]!.stop_id === 'HUB' ? 9 : 2.5)));
    load += board - alight;
    countAt(r, add, ref, st[i]!, arrive, board, alight, capacity);
    let depart = arrive + (12 + board * 2.5 + alight) * 1000;
    // Early at a timepoint: hold until the scheduled departure.
    if (st[i]!.timepoint) depart = Math.max(depart, at(st[i]!.departure));
    if (depart - arrive > every * 1000) positions(r, add, ref, arrive, depart, st[i]!.dist, st[i]!.dist, every, place, odometerAt);
    t = depart;
  }
  throw new Error(`trip ${template.trip_id} has fewer than two stops`);
}

/** Boardings at the front door; alightings split between the doors. */
function countAt(r: Rng, add: Add, ref: Record<string, string>, s: { stop_id: string; stop_sequence: number }, time: number, board: number, alight: number, capacity: number) {
  if (board === 0 && alight === 0) return;
  const rear = capacity > 100 ? Math.round(alight * 0.6) : Math.round(alight * 0.5);
  const children = board > 2 && r() < 0.3 ? 1 : 0;
  const front = [{ category: 'adults', boardings: board - children, alightings: alight - rear }, ...(children ? [{ category: 'children', boardings: children, alightings: 0 }] : [])];
  add('passenger_count', time + 1000, { ...ref, stop_id: s.stop_id, stop_sequence: s.stop_sequence, door: 1, counts: front });
  if (rear > 0) add('passenger_count', time + 1000, { ...ref, stop_id: s.stop_id, stop_sequence: s.stop_sequence, door: 2, counts: [{ category: 'adults', boardings: 0, alightings: rear }] });
}

/** Positions on a grid of `every` seconds between two instants, moving evenly from one distance to another. */
function positions(
  r: Rng, add: Add, ref: Record<string, string>, from: number, to: number, d0: number, d1: number, every: number,
  place: (d: number) => { lat: number; lon: number; bearing: number }, odometerAt: (d: number) => number,
) {
  const step = every * 1000;
  const speed = d1 === d0 ? 0 : Math.round(((d1 - d0) / ((to - from) / 1000)) * 3.6 * 10) / 10;
  for (let t = Math.ceil(from / step) * step; t < to; t += step) {
    const dist = d0 + ((d1 - d0) * (t - from)) / (to - from);
    const p = place(dist);
    add('position', t, { lat: p.lat, lon: p.lon, gps_valid: r() > 0.01, speed_kmh: Math.min(400, speed), bearing: p.bearing, accuracy_m: Math.round(between(r, 3, 15)), odometer_km: odometerAt(dist), ...ref });
  }
}

/** One or two stretches of 3 to 8 minutes during the day when the device has no network, each beginning at an item (so it has a backlog). */
function offlineWindows(r: Rng, items: { at: number }[]): [number, number][] {
  if (items.length < 10) return [];
  const count = intBetween(r, 1, 2);
  const out: [number, number][] = [];
  for (let k = 0; k < count; k++) {
    const from = items[Math.floor(items.length * between(r, 0.1, 0.9))]!.at;
    out.push([from, from + intBetween(r, 3, 8) * 60_000]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** The planned pieces of a vehicle from planning records (HH:MM:SS start times). */
export function piecesOf(records: readonly { trip_id: string; start_time: string; driver_id: string | null; vehicle_id: string | null }[], trips: ReadonlyMap<string, DemoTrip>): Map<string, PlannedPiece[]> {
  const byVehicle = new Map<string, PlannedPiece[]>();
  for (const p of records) {
    if (!p.vehicle_id || !p.driver_id) continue;
    const template = trips.get(p.trip_id);
    if (!template) continue;
    const start = gtfsSeconds(p.start_time);
    const list = byVehicle.get(p.vehicle_id) ?? [];
    list.push({ trip_id: p.trip_id, start, start_time: template.frequency ? formatGtfsTime(start) : null, driver_id: p.driver_id });
    byVehicle.set(p.vehicle_id, list);
  }
  return byVehicle;
}

