/**
 * bench:network's own load generator: the published timetable replayed, one vehicle per block
 * running in the window, each vehicle exactly on schedule plus a constant delay of its own
 * (0–3 min), reporting through the device API every period: its positions (every period,
 * interpolated between the stops), trip start and end, arrival and departure events at the stops.
 * It reads the timetable from the bench database directly (the simulator proper reads it through
 * the API); provisioning goes through the API (vehicle, driver, device, device key per vehicle).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { ReportItem } from '../src/domains/simulate/client.js';
import type { BatchPost } from '../src/domains/simulate/simulator.js';
import { senderThread } from './sender.js';

export interface BatchSeen {
  deviceId: string;
  vehicleId: string;
  items: { id: string; type: string; at: string; trip_id?: string; service_date?: string; event?: string; stop_sequence?: number }[];
  accepted: number;
  sentAt: number;
  answeredAt: number;
  /** When the bench's thread had the answer (the batch is timed on the sender thread: sender.ts). */
  seenAt: number;
}

export interface PrepareOptions {
  baseUrl: string;
  groupId: string;
  admin: { email: string; password: string };
  date: string;
  /** The first instant of the run (ms). */
  peak: number;
  minutes: number;
  periodS: number;
  maxVehicles: number;
  databaseUrl: string;
  log: (m: string) => void;
}

export interface LoadSource {
  name: string;
  vehicles: number;
  failures: number;
  /** Reads what the run needs (on the setup clock, before the service restarts on the run's). */
  prepare(o: PrepareOptions): Promise<void>;
  setBaseUrl(url: string): void;
  /** Work before the measured run, on the run's clock (provisioning, catching up with the day). */
  start?(now: () => number, onBatch: (b: BatchSeen) => void): Promise<void>;
  run(now: () => number, onBatch: (b: BatchSeen) => void, keepGoing: () => boolean): Promise<void>;
  activeVehicles(): number;
}

type Item = BatchSeen['items'][number] & Record<string, unknown>;

interface Vehicle {
  vehicleId: string;
  deviceId: string;
  driverId: string;
  key: string;
  /** Items sorted by time (ms). */
  items: { t: number; item: Item }[];
  next: number;
  /** When it next sends (real ms), staggered over the period. */
  sendAt: number;
}

const CONCURRENCY = 48;

export class ScheduleReplay implements LoadSource {
  readonly name = 'bench/network-replay.ts (the timetable replayed; not the simulator of src/domains/simulate)';
  vehicles = 0;
  failures = 0;
  private baseUrl = '';
  private token = '';
  private fleet: Vehicle[] = [];
  private o!: PrepareOptions;

  setBaseUrl(url: string) {
    this.baseUrl = url;
  }

  async prepare(o: PrepareOptions): Promise<void> {
    this.o = o;
    this.baseUrl = o.baseUrl;
    await this.login();
    const db = new pg.Client({ connectionString: o.databaseUrl });
    await db.connect();
    try {
      // Seconds of the service day at the run's start: noon minus 12 h in the feed's time zone.
      const { rows: [tz] } = await db.query<{ noon_offset: number }>(
        `SELECT extract(epoch FROM ($1::date + time '12:00') AT TIME ZONE g.timezone)::float8 - 43200 AS noon_offset FROM groups g WHERE g.group_id = $2`, [o.date, o.groupId]);
      const serviceDayStartMs = tz!.noon_offset * 1000;
      const from = Math.floor((o.peak - serviceDayStartMs) / 1000);
      const to = from + o.minutes * 60;
      const { rows: trips } = await db.query<{ trip_id: string; block_id: string | null; first_departure: number; last_arrival: number }>(
        `WITH v AS (SELECT p.gtfs_id FROM gtfs_publications p WHERE p.group_id = $1 ORDER BY p.published_at DESC LIMIT 1),
              active AS (
                SELECT c.service_id FROM gtfs_calendars c, v WHERE c.group_id = $1 AND c.gtfs_id = v.gtfs_id AND $2::date BETWEEN c.start_date AND c.end_date
                  AND (ARRAY[c.monday, c.tuesday, c.wednesday, c.thursday, c.friday, c.saturday, c.sunday])[extract(isodow FROM $2::date)::int]
                  AND NOT EXISTS (SELECT 1 FROM gtfs_calendar_dates d WHERE d.group_id = $1 AND d.gtfs_id = v.gtfs_id AND d.service_id = c.service_id AND d.date = $2::date AND d.exception_type = 2)
                UNION
                SELECT d.service_id FROM gtfs_calendar_dates d, v WHERE d.group_id = $1 AND d.gtfs_id = v.gtfs_id AND d.date = $2::date AND d.exception_type = 1)
         SELECT t.trip_id, t.block_id, t.first_departure, t.last_arrival FROM gtfs_trips t, v
         WHERE t.group_id = $1 AND t.gtfs_id = v.gtfs_id AND t.service_id IN (SELECT service_id FROM active)
           AND t.first_departure <= $4 AND t.last_arrival >= $3 ORDER BY t.first_departure`,
        [o.groupId, o.date, from, to]);
      // One vehicle per block (a trip without block: a vehicle of its own); blocks running at the start first.
      const blocks = new Map<string, typeof trips>();
      for (const t of trips) {
        const key = t.block_id ?? `trip:${t.trip_id}`;
        const list = blocks.get(key) ?? [];
        list.push(t);
        blocks.set(key, list);
      }
      const chosen = [...blocks.values()].sort((a, b) => a[0]!.first_departure - b[0]!.first_departure).slice(0, o.maxVehicles);
      const tripIds = chosen.flat().map((t) => t.trip_id);
      const { rows: stopTimes } = await db.query<{ trip_id: string; stop_sequence: number; stop_id: string; arrival_time: number; departure_time: number; lat: number; lon: number }>(
        `WITH v AS (SELECT p.gtfs_id FROM gtfs_publications p WHERE p.group_id = $1 ORDER BY p.published_at DESC LIMIT 1)
         SELECT st.trip_id, st.stop_sequence, st.stop_id, coalesce(st.arrival_time, st.departure_time) AS arrival_time, coalesce(st.departure_time, st.arrival_time) AS departure_time, s.stop_lat AS lat, s.stop_lon AS lon
         FROM gtfs_stop_times st JOIN v ON st.gtfs_id = v.gtfs_id JOIN gtfs_stops s ON s.group_id = st.group_id AND s.gtfs_id = st.gtfs_id AND s.stop_id = st.stop_id
         WHERE st.group_id = $1 AND st.trip_id = ANY($2) ORDER BY st.trip_id, st.stop_sequence`,
        [o.groupId, tripIds]);
      const byTrip = new Map<string, typeof stopTimes>();
      for (const s of stopTimes) (byTrip.get(s.trip_id) ?? byTrip.set(s.trip_id, []).get(s.trip_id)!).push(s);
      o.log(`replay: ${trips.length} trips of ${o.date} run between ${hms(from)} and ${hms(to)}: ${blocks.size} vehicles (blocks), ${chosen.length} simulated`);

      const startMs = o.peak;
      const endMs = o.peak + o.minutes * 60_000;
      let n = 0;
      const work = chosen.map((block) => async () => {
        const k = ++n;
        const vehicleId = `V${String(k).padStart(5, '0')}`;
        const deviceId = `D${String(k).padStart(5, '0')}`;
        await this.api('POST', '/vehicles', { vehicle_id: vehicleId, fleet_number: String(k), license_plate: `NB-${k}` });
        const driver = await this.api<{ id: string }>('POST', '/drivers', { driver_name: `Driver ${k}`, staff_number: `S${k}` });
        await this.api('POST', '/devices', { device_id: deviceId, vehicle_id: vehicleId });
        const key = (await this.api<{ value: string }>('POST', '/api-keys', { device_id: deviceId, name: 'netbench' })).value;
        const delayMs = Math.floor(Math.random() * 180) * 1000;
        const items: Vehicle['items'] = [];
        const at = (t: number) => ({ t, iso: new Date(t).toISOString() });
        const add = (t: number, item: Omit<Item, 'id' | 'at'>) => {
          if (t < startMs || t >= endMs) return;
          items.push({ t, item: { id: randomUUID(), at: at(t).iso, ...item } as Item });
        };
        items.push({ t: startMs, item: { id: randomUUID(), type: 'sign_on', at: new Date(startMs).toISOString(), driver_id: driver.id, vehicle_id: vehicleId } });
        for (const trip of block) {
          const st = byTrip.get(trip.trip_id) ?? [];
          if (st.length < 2) continue;
          const ms = (s: number) => serviceDayStartMs + s * 1000 + delayMs;
          const ref = { trip_id: trip.trip_id, service_date: o.date };
          const tripStart = Math.max(startMs, ms(st[0]!.departure_time) - 60_000);
          if (ms(st[st.length - 1]!.arrival_time) < startMs) continue;
          items.push({ t: tripStart, item: { id: randomUUID(), type: 'trip_start', at: new Date(tripStart).toISOString(), ...ref } as Item });
          st.forEach((s, i) => {
            if (i > 0) add(ms(s.arrival_time), { type: 'trip_event', ...ref, event: 'arrival', stop_sequence: s.stop_sequence, lat: s.lat, lon: s.lon, gps_valid: true });
            if (i < st.length - 1) add(ms(s.departure_time), { type: 'trip_event', ...ref, event: 'departure', stop_sequence: s.stop_sequence, lat: s.lat, lon: s.lon, gps_valid: true });
          });
          // Positions every period, on the straight line between the stops.
          for (let t = Math.ceil(ms(st[0]!.departure_time) / (o.periodS * 1000)) * o.periodS * 1000; t < ms(st[st.length - 1]!.arrival_time); t += o.periodS * 1000) {
            let i = 0;
            while (i < st.length - 2 && ms(st[i + 1]!.arrival_time) <= t) i++;
            const a = st[i]!;
            const b = st[i + 1]!;
            const span = ms(b.arrival_time) - ms(a.departure_time);
            const f = span > 0 ? Math.min(1, Math.max(0, (t - ms(a.departure_time)) / span)) : 1;
            add(t, { type: 'position', lat: a.lat + (b.lat - a.lat) * f, lon: a.lon + (b.lon - a.lon) * f, gps_valid: true, ...ref });
          }
          add(ms(st[st.length - 1]!.arrival_time) + 5000, { type: 'trip_end', ...ref });
        }
        items.sort((x, y) => x.t - y.t);
        this.fleet.push({ vehicleId, deviceId, driverId: driver.id, key, items, next: 0, sendAt: 0 });
      });
      await pool(work, 16);
      this.vehicles = this.fleet.length;
    } finally {
      await db.end();
    }
  }

  activeVehicles(): number {
    return this.fleet.filter((v) => v.next < v.items.length).length;
  }

  async run(now: () => number, onBatch: (b: BatchSeen) => void, keepGoing: () => boolean): Promise<void> {
    const period = this.o.periodS * 1000;
    const t0 = Date.now();
    this.fleet.forEach((v, i) => (v.sendAt = t0 + Math.floor((i / this.fleet.length) * period)));
    const sender = senderThread(this.baseUrl, this.o.groupId);
    let inFlight = 0;
    const sends = new Set<Promise<void>>();
    while (keepGoing()) {
      const real = Date.now();
      for (const v of this.fleet) {
        if (v.sendAt > real || inFlight >= CONCURRENCY) continue;
        v.sendAt += period;
        const t = now();
        let end = v.next;
        while (end < v.items.length && v.items[end]!.t <= t) end++;
        if (end === v.next) continue;
        const batch = v.items.slice(v.next, end).map((x) => x.item);
        inFlight++;
        const p = this.send(sender.post, v, batch, end, onBatch).finally(() => {
          inFlight--;
          sends.delete(p);
        });
        sends.add(p);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await Promise.all(sends);
    await sender.close();
  }

  /** A device's batch, posted and timed on the sender thread (sender.ts), as the simulator's are. */
  private async send(post: BatchPost, v: Vehicle, batch: Item[], end: number, onBatch: (b: BatchSeen) => void) {
    try {
      const { answer, sentAt, answeredAt } = await post(v.key, batch as unknown as ReportItem[]);
      if (answer.rejected.length > 0 && this.failures === 0) this.o.log(`replay: rejected ${JSON.stringify(answer.rejected[0])}`);
      v.next = end;
      onBatch({ deviceId: v.deviceId, vehicleId: v.vehicleId, items: batch, accepted: answer.accepted.length, sentAt, answeredAt, seenAt: Date.now() });
    } catch (err) {
      // The items stay for the next send (a device keeps its backlog).
      if (this.failures++ < 5) this.o.log(`replay: ${v.deviceId}: ${(err as Error).message}`);
    }
  }

  private async login() {
    const res = await fetch(`${this.baseUrl}/api/v4/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(this.o.admin).toString() });
    if (!res.ok) throw new Error(`login: ${res.status}`);
    this.token = ((await res.json()) as { session_id: string }).session_id;
  }

  private async api<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl}/api/v4/groups/${this.o.groupId}${path}`, {
      method, headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }
}

async function pool(work: (() => Promise<void>)[], concurrency: number) {
  let i = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (i < work.length) await work[i++]!();
  }));
}

const hms = (s: number) => `${String(Math.floor(s / 3600)).padStart(2, '0')}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}`;
