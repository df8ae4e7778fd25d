/**
 * The network simulator (issue #16 §1, docs/simulator.md): the driver applications of any group
 * whose GTFS is published, talking to the service over HTTP only (the service may run on an
 * embedded database in another process).
 *
 * For each service day it runs, it reads the published schedule (GET /groups/{g}/schedule) and the
 * planning; one vehicle per running block (trips chained by block_id, or by the planning's
 * vehicle when the day is planned; a trip without block_id is a block of its own); the first
 * `vehicles` blocks running at the time of day the simulator started. The traffic model
 * (traffic.ts) gives each trip its truth; each vehicle's day (run.ts) turns it into reports,
 * sent through the device API with the device's own key every `period` seconds (each device at
 * its own phase), as a device does: offline windows hold the items back and replay them as a
 * backlog, and now and then a batch is sent twice (a lost answer). With `provision`, the
 * vehicle, driver and device of each block are made through the API (idempotently), and the
 * device's API key when it first has something to send.
 */
import { addDays, localDate, serviceDayStart } from '../../platform/time.js';
import { rngOf, stableUuid, type Rng } from '../../platform/random.js';
import type { ScheduleTrip, ServiceDaySchedule } from '../schedule/schemas.js';
import { ApiClient, HttpStatusError, type AdminAuth, type PlanningRows, type ReportItem } from './client.js';
import { tripKey, tripPlans, VehicleRun, type Duty, type Item, type RunOptions, type TripPlan } from './run.js';
import { busyStopsOf, TrafficModel, type TripTruth } from './traffic.js';

export type { AdminAuth } from './client.js';

export interface NetworkSimulatorOptions {
  baseUrl: string;
  groupId: string;
  /** An admin of the group: email and password (device keys need a session), or an admin API key (then no device key can be made). */
  adminAuth: AdminAuth;
  /** An account allowed to read the planning (operator, regulator, reader); absent: the admin credential is tried. */
  planningAuth?: AdminAuth;
  /** Make the vehicle, driver and device of each block when missing (and their keys). */
  provision?: boolean;
  /** At most this many vehicles: the first blocks running at the start (then the next to start). */
  vehicles?: number;
  /** Seconds between two positions, and between two sends of a device (15). */
  period?: number;
  /** The simulated time (tests drive it by hand). */
  now?: () => Date;
  log?: (message: string) => void;
  seed?: number;
  /** Whole past service days sent first, as fast as the service takes them. */
  backfillDays?: number;
  /** Only these routes' trips. */
  routes?: readonly string[];
  /** Read the planning and follow it when the day is planned (true). */
  usePlanning?: boolean;
  /** GPS error, metres RMS (8). */
  gpsNoise?: number;
  /** Positions older than this when sent are thinned to one a minute (10 minutes; a backfill). */
  thinAfterMs?: number;
  /** Share of batches sent twice (0.02). */
  duplicateRate?: number;
  /** Offline windows (1–2 a vehicle-day of 3–8 minutes) (true). */
  offline?: boolean;
  passengerCounts?: boolean;
  /** Requests in flight at once (8). */
  concurrency?: number;
  /** Stops where dwell is longer; default: those served by 3 routes or more. */
  busyStops?: ReadonlySet<string>;
  /** The planning of a date that has none (the body of PUT planning), sent before the day runs (the demo plans its days). */
  planDay?: (date: string) => PlanningRows;
  /**
   * How a device's batch is posted and timed (default: the API client on this thread, timed
   * here). A load generator measuring the service gives one that posts from a thread of its own
   * (bench:network): timed on this thread, a batch's latency also counts whatever holds this
   * thread's event loop (thousands of vehicles' traffic model) when the answer arrives.
   */
  post?: BatchPost;
}

/** What the service answered a device batch (POST device/reports). */
export type ReportAnswer = Awaited<ReturnType<ApiClient['reports']>>;
/**
 * Posts a device batch with a device key: the answer, and when the request left and its answer
 * came back (epoch ms). A status other than 2xx is an HttpStatusError.
 */
export type BatchPost = (key: string, items: readonly ReportItem[]) => Promise<{ answer: ReportAnswer; sentAt: number; answeredAt: number }>;

export interface NetworkSimulatorStats {
  batches: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  failedRequests: number;
  /** Milliseconds from sending a batch to its answer (the last 100,000). */
  batchLatencyMs: number[];
  vehicles: number;
  firstRejection: unknown;
}

/** What onBatch hands over for each answered batch. */
export interface BatchEvent {
  deviceId: string;
  vehicleId: string;
  serviceDate: string;
  items: readonly Item[];
  accepted: number;
  duplicates: number;
  rejected: number;
  /** Epoch ms: when the request left, when the answer came back (real time), as `post` timed them. */
  sentAt: number;
  /** The simulated time at which the device sent it (the `now` option; real time by default). */
  simulatedAt: number;
  answeredAt: number;
  /** Epoch ms: when this thread had the answer (after answeredAt by what held its event loop). */
  seenAt: number;
  /** A batch sent a second time on purpose (a lost answer). */
  resent: boolean;
}

/** A simulated vehicle on one service date, and how far its reports went. */
interface Stream {
  run: VehicleRun;
  /** Items with time ≤ cursor were sent. */
  cursor: number;
  nextSendAt: number;
  offline: [number, number][];
}

interface Day {
  date: string;
  dayStart: Date;
  dayType: ServiceDaySchedule['day_type'];
  streams: Stream[];
  truth: Map<string, { vehicleKey: string; plan: TripPlan; truth: TripTruth }>;
}

const MAX_BATCH = 1000;
const MAX_LATENCY_SAMPLES = 100_000;

export class NetworkSimulator {
  readonly stats: NetworkSimulatorStats = { batches: 0, accepted: 0, duplicates: 0, rejected: 0, failedRequests: 0, batchLatencyMs: [], vehicles: 0, firstRejection: null };
  private readonly o: Required<Omit<NetworkSimulatorOptions, 'log' | 'planningAuth' | 'routes' | 'busyStops' | 'vehicles' | 'planDay' | 'post'>> & Pick<NetworkSimulatorOptions, 'planningAuth' | 'routes' | 'busyStops' | 'vehicles' | 'planDay'> & { log: (m: string) => void };
  private readonly post: BatchPost;
  private readonly client: ApiClient;
  private readonly planningClient: ApiClient;
  private readonly listeners = new Set<(b: BatchEvent) => void>();
  private readonly r: Rng;
  private timezone = 'UTC';
  /** Seconds of the service day at the start: the blocks running then are the ones simulated. */
  private startSecondOfDay = 0;
  private readonly days = new Map<string, Day>();
  private readonly finished = new Set<string>();
  private readonly devicesOf = new Map<string, string>();
  private readonly known = { vehicles: new Set<string>(), devices: new Set<string>(), drivers: new Set<string>() };
  private readonly keys = new Map<string, string>();
  private keysBlockedUntil = 0;
  private planningReadable = true;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private ticking: Promise<void> | null = null;

  constructor(o: NetworkSimulatorOptions) {
    this.o = {
      provision: false, period: 15, now: () => new Date(), log: () => {}, seed: 2026, backfillDays: 0, usePlanning: true, gpsNoise: 8,
      thinAfterMs: 10 * 60_000, duplicateRate: 0.02, offline: true, passengerCounts: true, concurrency: 8, ...o,
      baseUrl: o.baseUrl.replace(/\/$/, ''),
    };
    this.client = new ApiClient(this.o.baseUrl, o.groupId, o.adminAuth);
    this.planningClient = o.planningAuth ? new ApiClient(this.o.baseUrl, o.groupId, o.planningAuth) : this.client;
    this.post = o.post ?? (async (key, items) => {
      const sentAt = Date.now();
      const answer = await this.client.reports(key, items);
      return { answer, sentAt, answeredAt: Date.now() };
    });
    this.r = rngOf(this.o.seed, o.groupId, 'simulator');
  }

  /** Calls `cb` for each answered batch; returns the function that stops it. */
  onBatch(cb: (b: BatchEvent) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Logs in, reads the group and the days to run, provisions, and sends what is due (the backfill). */
  async start(): Promise<void> {
    await this.client.login();
    if (this.planningClient !== this.client) await this.planningClient.login();
    this.timezone = (await this.client.group()).timezone;
    const now = this.o.now();
    this.startSecondOfDay = (now.getTime() - serviceDayStart(localDate(now, this.timezone), this.timezone).getTime()) / 1000;
    await this.loadResources();
    await this.tick();
  }

  /**
   * Runs tick() every `intervalMs` until stop(): each device sends at its own phase of the period,
   * to the tick. Ticks of 100 ms spread the sends as independent devices do; ticks of a second
   * sent each second's devices in one wave (28 batches at once for Queens' 418 buses), a burst
   * no real fleet makes.
   */
  run(intervalMs = 100): void {
    const loop = async () => {
      try {
        await this.tick();
      } catch (err) {
        this.o.log(`simulator: ${(err as Error).message}`);
      }
      if (this.timer !== null) this.timer = setTimeout(() => void (this.running = loop()), intervalMs);
    };
    this.timer = setTimeout(() => void (this.running = loop()), intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    await this.ticking;
  }

  /** The simulated truth of a service date (trip key → vehicle and truth), once the day is prepared. */
  truthOf(date: string): ReadonlyMap<string, { vehicleKey: string; plan: TripPlan; truth: TripTruth }> | undefined {
    return this.days.get(date)?.truth;
  }

  /** The vehicles simulated on a date, by vehicle id. */
  vehiclesOf(date: string): { vehicleId: string; deviceId: string; trips: string[]; offline: [number, number][]; run: VehicleRun }[] {
    return (this.days.get(date)?.streams ?? []).map((s) => ({
      vehicleId: s.run.vehicleId, deviceId: s.run.deviceId, trips: s.run.duties.flatMap((d) => d.trips.map((t) => t.plan.key)), offline: s.offline, run: s.run,
    }));
  }

  /** Sends every item due by now; prepares service days as they begin. */
  async tick(): Promise<void> {
    const t = this.doTick();
    this.ticking = t;
    await t;
  }

  private async doTick(): Promise<void> {
    const now = this.o.now().getTime();
    for (const date of this.datesToRun(now)) {
      if (this.days.has(date) || this.finished.has(date)) continue;
      this.days.set(date, await this.prepareDay(date));
    }
    const due: Stream[] = [];
    for (const day of this.days.values()) {
      for (const s of day.streams) {
        if (s.cursor >= s.run.to) continue;
        // A device behind by more than two periods (a backfill, a restart) sends at once.
        if (now >= s.nextSendAt || now - s.cursor > 2 * this.o.period * 1000) due.push(s);
      }
    }
    await pool(due, this.o.concurrency, (s) => this.send(s, now));
    for (const [date, day] of this.days) {
      if (day.streams.every((s) => s.cursor >= s.run.to) && serviceDayStart(addDays(date, 1), this.timezone).getTime() + 6 * 3600_000 < now) {
        this.days.delete(date);
        this.finished.add(date);
      }
    }
  }

  /** The backfill days, yesterday (its trips past midnight) and today. */
  private datesToRun(now: number): string[] {
    const today = localDate(new Date(now), this.timezone);
    const dates: string[] = [];
    for (let k = Math.max(1, this.o.backfillDays); k >= 1; k--) dates.push(addDays(today, -k));
    dates.push(today);
    return dates.filter((d) => d === today || this.o.backfillDays > 0 || serviceDayStart(addDays(d, 1), this.timezone).getTime() + 6 * 3600_000 > now);
  }

  private async prepareDay(date: string): Promise<Day> {
    const schedule = await this.client.schedule(date, this.o.routes);
    const trips = new Map(schedule.trips.map((t) => [tripKey(t), t]));
    const byTripStart = new Map(schedule.trips.map((t) => [`${t.trip_id}|${t.start_time}`, t]));
    // Chains: the planning's vehicles when the day is planned, else blocks.
    const chains = new Map<string, { vehicleId: string; trips: { key: string; trip: ScheduleTrip; driver: string }[] }>();
    let planning = this.o.usePlanning ? await this.planningOf(date) : [];
    if (planning.length === 0 && this.o.planDay) {
      await this.client.putPlanning(this.o.planDay(date), 'simulator.json');
      planning = await this.planningOf(date);
      this.o.log(`simulator: planned ${planning.length} trips of ${date}`);
    }
    const planned = planning.filter((p) => p.vehicle_id && p.driver_id);
    if (planned.length > 0) {
      for (const p of planned) {
        const trip = byTripStart.get(`${p.trip_id}|${p.start_time}`) ?? trips.get(p.trip_id);
        if (!trip) continue;
        const c = chains.get(p.vehicle_id!) ?? chains.set(p.vehicle_id!, { vehicleId: p.vehicle_id!, trips: [] }).get(p.vehicle_id!)!;
        c.trips.push({ key: tripKey(trip), trip, driver: p.driver_id! });
      }
    } else {
      for (const [key, trip] of trips) {
        const block = trip.block_id ?? key;
        const c = chains.get(block) ?? chains.set(block, { vehicleId: simId('sim', block), trips: [] }).get(block)!;
        c.trips.push({ key, trip, driver: driverIdOf(this.o.groupId, block) });
      }
    }
    for (const c of chains.values()) c.trips.sort((a, b) => a.trip.first_departure - b.trip.first_departure);
    if (planned.length === 0) {
      // A block longer than 9 hours is driven by two drivers: the relief at the first trip starting past its middle.
      for (const [block, c] of chains) {
        const from = c.trips[0]!.trip.first_departure;
        const to = c.trips[c.trips.length - 1]!.trip.last_arrival;
        if (to - from <= 9 * 3600) continue;
        const second = driverIdOf(this.o.groupId, `${block}|relief`);
        for (const t of c.trips) if (t.trip.first_departure >= (from + to) / 2) t.driver = second;
      }
    }
    const span = (c: { trips: { trip: ScheduleTrip }[] }) => [c.trips[0]!.trip.first_departure - 20 * 60, c.trips[c.trips.length - 1]!.trip.last_arrival] as const;
    const at = this.startSecondOfDay;
    const ordered = [...chains].sort(([, a], [, b]) => {
      const [a0, a1] = span(a);
      const [b0, b1] = span(b);
      const ra = a0 <= at && at <= a1 ? 0 : a0 > at ? 1 : 2;
      const rb = b0 <= at && at <= b1 ? 0 : b0 > at ? 1 : 2;
      return ra - rb || a0 - b0;
    });
    const chosen = this.o.vehicles === undefined ? ordered : ordered.slice(0, this.o.vehicles);
    // Geometry and filled times for the chosen vehicles' trips only (a city's day has tens of thousands).
    const chainOfTrip = new Map<string, string>();
    for (const [key, c] of chosen) for (const t of c.trips) chainOfTrip.set(t.key, key);
    const plans = new Map(tripPlans(schedule, (t) => chainOfTrip.has(tripKey(t))).map((p) => [p.key, p]));

    const model = new TrafficModel({ seed: this.o.seed, busyStops: this.o.busyStops ?? busyStopsOf(schedule.trips) });
    const truths = model.day(date, schedule.day_type, [...plans.values()], (p) => chainOfTrip.get(p.key) ?? null);

    const dayStart = new Date(schedule.day_start);
    const day: Day = { date, dayStart, dayType: schedule.day_type, streams: [], truth: new Map() };
    const runOptions: RunOptions = { seed: this.o.seed, period: this.o.period, gpsNoise: this.o.gpsNoise, passengerCounts: this.o.passengerCounts };
    let skipped = 0;
    for (const [key, c] of chosen) {
      const deviceId = await this.deviceFor(key, c.vehicleId, planned.length === 0 ? [...new Set(c.trips.map((t) => t.driver))] : []);
      if (deviceId === null) {
        skipped++;
        continue;
      }
      const duties: Duty[] = [];
      for (const t of c.trips) {
        const plan = plans.get(t.key);
        if (!plan) continue; // fewer than two stops
        const truth = truths.get(t.key)!;
        day.truth.set(t.key, { vehicleKey: key, plan, truth });
        const current = duties[duties.length - 1];
        if (current && current.driver_id === t.driver) current.trips.push({ plan, truth });
        else duties.push({ driver_id: t.driver, trips: [{ plan, truth }] });
      }
      if (duties.length === 0) continue;
      const run = new VehicleRun(key, date, dayStart, c.vehicleId, deviceId, duties, runOptions);
      const r = rngOf(this.o.seed, date, key, 'stream');
      const phase = Math.floor(r() * this.o.period * 1000);
      day.streams.push({ run, cursor: run.from - 1, nextSendAt: Math.ceil(this.o.now().getTime() / 1000) * 1000 + phase, offline: this.o.offline ? offlineWindows(r, run.from, run.to) : [] });
    }
    this.stats.vehicles = Math.max(this.stats.vehicles, day.streams.length);
    this.o.log(`simulator: ${date} (${schedule.day_type}): ${schedule.trips.length} trips, ${chains.size} ${planned.length > 0 ? 'planned vehicles' : 'blocks'}, ${day.streams.length} simulated${skipped ? ` (${skipped} without a device: --provision makes them)` : ''}`);
    return day;
  }

  private async planningOf(date: string): Promise<{ trip_id: string; start_time: string; vehicle_id: string | null; driver_id: string | null }[]> {
    if (!this.planningReadable) return [];
    try {
      return await this.planningClient.planning(date);
    } catch (err) {
      if (!(err instanceof HttpStatusError) || err.status !== 403) throw err;
      this.planningReadable = false;
      this.o.log('simulator: the planning is not readable with this credential (admin cannot read it: give an operator with planningAuth); blocks are used');
      return [];
    }
  }

  /** The vehicles, devices and drivers that exist, and the keys an earlier run made (revoked). */
  private async loadResources(): Promise<void> {
    const devices = await this.client.devices();
    for (const d of devices) {
      this.known.devices.add(d.device_id);
      if (d.vehicle_id && !d.archived) this.devicesOf.set(d.vehicle_id, d.device_id);
    }
    for (const v of await this.client.vehicles()) this.known.vehicles.add(v.id);
    if (this.client.hasSession) {
      const keys = await this.client.apiKeys();
      for (const k of keys) if (k.name === 'simulator' && k.device_id) await this.client.revokeApiKey(k.api_key_id);
    }
  }

  /** The device of a vehicle; with provision, the vehicle, the block's drivers and the device are made when missing. */
  private async deviceFor(key: string, vehicleId: string, driverIds: readonly string[]): Promise<string | null> {
    const known = this.devicesOf.get(vehicleId);
    if (known) {
      if (this.o.provision) for (const d of driverIds) await this.ensureDriver(key, d);
      return known;
    }
    if (!this.o.provision) return null;
    if (!this.known.vehicles.has(vehicleId)) {
      await this.create(() => this.client.createVehicle({ vehicle_id: vehicleId, fleet_number: vehicleId.slice(0, 60), license_plate: `SIM-${hash(vehicleId, 8).toUpperCase()}`, capacity: 90 }));
      this.known.vehicles.add(vehicleId);
    }
    for (const d of driverIds) await this.ensureDriver(key, d);
    const deviceId = `${vehicleId}-device`.slice(0, 128);
    if (!this.known.devices.has(deviceId)) {
      await this.create(() => this.client.createDevice({ device_id: deviceId, vehicle_id: vehicleId, label: `Simulated device of ${vehicleId}`.slice(0, 200), archived: false }));
      this.known.devices.add(deviceId);
    }
    this.devicesOf.set(vehicleId, deviceId);
    return deviceId;
  }

  private async ensureDriver(key: string, driverId: string): Promise<void> {
    if (this.known.drivers.has(driverId)) return;
    await this.create(() => this.client.createDriver({ driver_id: driverId, driver_name: `Simulated driver ${driverId.slice(0, 6)} (${key})`.slice(0, 200), staff_number: `SIM-${driverId.slice(0, 12)}`, archived: false }));
    this.known.drivers.add(driverId);
  }

  /** A POST that makes a resource; 409 (it exists) is fine. */
  private async create(call: () => Promise<unknown>): Promise<void> {
    try {
      await call();
    } catch (err) {
      if (!(err instanceof HttpStatusError) || err.status !== 409) throw err;
    }
  }

  /** The device's API key, made on first need; null while key creation is rate limited (429). */
  private async keyOf(deviceId: string): Promise<string | null> {
    const known = this.keys.get(deviceId);
    if (known) return known;
    if (Date.now() < this.keysBlockedUntil) return null;
    try {
      const key = (await this.client.createApiKey({ device_id: deviceId, name: 'simulator' })).value;
      this.keys.set(deviceId, key);
      return key;
    } catch (err) {
      if (!(err instanceof HttpStatusError) || err.status !== 429) throw err;
      this.keysBlockedUntil = Date.now() + err.retryAfterSeconds * 1000;
      this.o.log(`simulator: device keys are rate limited; the next ones in ${err.retryAfterSeconds} s (the devices keep their backlog)`);
      return null;
    }
  }

  /** Sends a device's items due by now (up to the start of an offline window it is in). */
  private async send(s: Stream, now: number): Promise<void> {
    const window = s.offline.find(([a, b]) => now >= a && now < b);
    const horizon = Math.min(window ? window[0] - 1 : now, s.run.to);
    while (s.nextSendAt <= now) s.nextSendAt += this.o.period * 1000;
    if (horizon <= s.cursor) return;
    const key = await this.keyOf(s.run.deviceId);
    if (key === null) return;
    const step = this.o.period * 1000;
    const items = s.run.items(s.cursor, horizon).filter(({ at, item }) => item.type !== 'position' || now - at <= this.o.thinAfterMs || at % 60_000 < step).map((x) => x.item);
    for (let i = 0; i < items.length; i += MAX_BATCH) {
      const batch = items.slice(i, i + MAX_BATCH);
      if (!(await this.sendBatch(s, key, batch, false, now))) return;
      if (this.r() < this.o.duplicateRate) await this.sendBatch(s, key, batch, true, now);
    }
    s.cursor = horizon;
  }

  private async sendBatch(s: Stream, key: string, items: Item[], resent: boolean, simulatedAt: number): Promise<boolean> {
    try {
      const { answer, sentAt, answeredAt } = await this.post(key, items as unknown as ReportItem[]); // run.ts builds items as a loose Item: typing them as the document's union is still to do
      const seenAt = Date.now();
      this.stats.batches++;
      this.stats.accepted += answer.accepted.length;
      this.stats.duplicates += answer.duplicates.length;
      this.stats.rejected += answer.rejected.length;
      if (this.stats.batchLatencyMs.length >= MAX_LATENCY_SAMPLES) this.stats.batchLatencyMs.shift();
      this.stats.batchLatencyMs.push(answeredAt - sentAt);
      if (answer.rejected.length > 0 && this.stats.firstRejection === null) {
        this.stats.firstRejection = answer.rejected[0];
        this.o.log(`simulator: the service rejected an item of ${s.run.deviceId}: ${JSON.stringify(answer.rejected[0])}`);
      }
      const event: BatchEvent = {
        deviceId: s.run.deviceId, vehicleId: s.run.vehicleId, serviceDate: s.run.serviceDate, items, accepted: answer.accepted.length,
        duplicates: answer.duplicates.length, rejected: answer.rejected.length, sentAt, answeredAt, seenAt, simulatedAt, resent,
      };
      for (const cb of this.listeners) cb(event);
      return true;
    } catch (err) {
      this.stats.failedRequests++;
      this.o.log(`simulator: ${s.run.deviceId} could not send (${(err as Error).message}); it keeps its backlog`);
      // Its key was revoked (another simulator started): a new one at a later send.
      if (err instanceof HttpStatusError && err.status === 401) this.keys.delete(s.run.deviceId);
      return false;
    }
  }
}

/** One or two stretches of 3 to 8 minutes in [from, to] when the device has no network. */
function offlineWindows(r: Rng, from: number, to: number): [number, number][] {
  if (to - from < 30 * 60_000) return [];
  const out: [number, number][] = [];
  const count = r() < 0.5 ? 1 : 2;
  for (let k = 0; k < count; k++) {
    const a = Math.round(from + (to - from) * (0.1 + 0.8 * r()));
    out.push([a, a + (3 + Math.floor(r() * 6)) * 60_000]);
  }
  return out.sort((x, y) => x[0] - y[0]);
}

/** Runs `f` over the items, at most `limit` at once. */
async function pool<T>(items: readonly T[], limit: number, f: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await f(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const hash = (text: string, n: number) => stableUuid(text).replaceAll('-', '').slice(0, n);

/** A resource id for a block: readable when the block id fits the id rules, else a hash. */
export function simId(prefix: string, key: string): string {
  return /^[A-Za-z0-9._:-]{1,100}$/.test(key) ? `${prefix}-${key}` : `${prefix}-${hash(key, 16)}`;
}

/** The driver of a block (24 hex): the same at every run. */
export function driverIdOf(groupId: string, key: string): string {
  return stableUuid('driver', groupId, key).replaceAll('-', '').slice(0, 24);
}
