/**
 * The simulator: the demo network's driver applications, talking to the service over HTTP only
 * (no database access), so it is also an end-to-end test of the device API.
 *
 * At start it logs in with the demo admin and operator accounts, revokes the device API keys an
 * earlier run made (name "simulator"), reads the planning of each day it
 * runs (planning it through PUT planning when the day has none), and builds each vehicle's day
 * (simulation.ts). Then every tick it sends, device by device and with that device's own key,
 * the items whose time has come: everything up to now at once for a backfill, then in real time.
 * A device in an offline window holds its items and replays the backlog when it reconnects; a
 * failed request keeps the items for the next tick; now and then a batch is sent twice, as a
 * device does when an answer is lost (the service acknowledges the second as duplicates).
 */
import { addDays, localDate, serviceDayStart } from '../../platform/time.js';
import { demoAccount, DEMO_GROUP } from './load.js';
import { DEFAULT_SEED, generateNetwork, type DemoNetwork, type DemoTrip } from './network.js';
import { demoAssignments } from './planning.js';
import { rngOf, type Rng } from './random.js';
import { piecesOf, vehicleDay, type SimItem } from './simulation.js';

export interface SimulatorOptions {
  baseUrl: string;
  groupId?: string;
  seed?: number;
  /** The simulated time (tests drive it by hand; an accelerated run passes a faster clock). */
  now?: () => Date;
  /** Whole past service days sent at start (the backfill), before today. */
  backfillDays?: number;
  /** Seconds between two GPS positions during a trip. */
  positionEvery?: number;
  /** Positions older than this at send time are thinned to one a minute (a fast backfill). */
  thinAfterMs?: number;
  log?: (message: string) => void;
  admin?: { email: string; password: string };
  reader?: { email: string; password: string };
}

export interface SimulatorStats {
  batches: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  failedRequests: number;
  firstRejection: unknown;
}

interface DeviceQueue {
  deviceId: string;
  items: SimItem[];
  /** Index of the next item to send. */
  next: number;
}

const MAX_BATCH = 1000;

export class Simulator {
  readonly stats: SimulatorStats = { batches: 0, accepted: 0, duplicates: 0, rejected: 0, failedRequests: 0, firstRejection: null };
  private readonly o: Required<Omit<SimulatorOptions, 'log'>> & { log: (m: string) => void };
  private readonly network: DemoNetwork;
  private readonly trips: Map<string, DemoTrip>;
  private readonly r: Rng;
  private adminToken = '';
  private readerToken = '';
  /** Vehicle → the device mounted in it. */
  private devices = new Map<string, string>();
  /** Device → its API key, made when the device first has something to send. */
  private keys = new Map<string, string>();
  /** Key creation is rate limited (RATE_LIMIT_API_KEYS_PER_MINUTE): no new key before this (real time). */
  private keysBlockedUntil = 0;
  /** Queues per service date and device. */
  private days = new Map<string, DeviceQueue[]>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(o: SimulatorOptions) {
    this.o = {
      groupId: DEMO_GROUP, seed: DEFAULT_SEED, now: () => new Date(), backfillDays: 0, positionEvery: 20, thinAfterMs: 10 * 60_000,
      admin: demoAccount('admin'), reader: demoAccount('operator'), log: () => {}, ...o,
    };
    this.network = generateNetwork(this.o.seed);
    this.trips = new Map(this.network.trips.map((t) => [t.trip_id, t]));
    this.r = rngOf(this.o.seed, 'simulator');
  }

  /** Logs in, makes the device keys, prepares the days and sends what is due (the backfill). */
  async start(): Promise<void> {
    this.adminToken = await this.login(this.o.admin);
    this.readerToken = await this.login(this.o.reader);
    await this.findDevices();
    await this.tick();
  }

  /** Runs tick() every `intervalMs` until stop(). */
  run(intervalMs: number): void {
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
  }

  /** Sends every item due by now, device by device; prepares new service days as they begin. */
  async tick(): Promise<void> {
    const now = this.o.now().getTime();
    for (const date of this.datesToRun(now)) if (!this.days.has(date)) this.days.set(date, await this.prepareDay(date));
    for (const [date, queues] of this.days) {
      for (const q of queues) await this.sendDue(q, now);
      if (queues.every((q) => q.next >= q.items.length)) this.days.delete(date);
    }
  }

  /** The service dates with work up to now: the backfill days, yesterday (its trips past midnight) and today. */
  private datesToRun(now: number): string[] {
    const today = localDate(new Date(now), this.network.timezone);
    const dates: string[] = [];
    for (let k = Math.max(1, this.o.backfillDays); k >= 1; k--) dates.push(addDays(today, -k));
    dates.push(today);
    // A day already over when the simulator starts is sent only when asked (backfillDays).
    return dates.filter((d) => d === today || this.o.backfillDays > 0 || serviceDayStart(addDays(d, 1), this.network.timezone).getTime() + 4 * 3600_000 > now);
  }

  private async prepareDay(date: string): Promise<DeviceQueue[]> {
    const compact = date.replaceAll('-', '');
    let planning = await this.api<PlanningRow[]>('GET', `/planning?date=${compact}`, 'reader');
    if (planning.length === 0) {
      await this.api('PUT', '/planning?filename=simulator.json', 'admin', demoAssignments(this.network, date));
      planning = await this.api<PlanningRow[]>('GET', `/planning?date=${compact}`, 'reader');
      this.o.log(`simulator: planned ${planning.length} trips of ${date}`);
    }
    const queues: DeviceQueue[] = [];
    for (const [vehicleId, pieces] of piecesOf(planning, this.trips)) {
      const deviceId = this.devices.get(vehicleId);
      if (!deviceId) continue;
      const day = vehicleDay(this.network, date, vehicleId, deviceId, pieces, { seed: this.o.seed, positionEvery: this.o.positionEvery });
      queues.push({ deviceId, items: day.items.sort((a, b) => a.release - b.release), next: 0 });
    }
    return queues;
  }

  private async sendDue(q: DeviceQueue, now: number): Promise<void> {
    if (q.next >= q.items.length || q.items[q.next]!.release > now) return;
    const key = await this.keyOf(q.deviceId);
    // No key yet (the key creation limit is reached): the device keeps its backlog for a later tick.
    if (key === null) return;
    while (q.next < q.items.length && q.items[q.next]!.release <= now) {
      let end = q.next;
      const batch: SimItem['item'][] = [];
      while (end < q.items.length && q.items[end]!.release <= now && batch.length < MAX_BATCH) {
        const it = q.items[end]!;
        end++;
        // A fast backfill: old positions thinned to one a minute.
        if (it.item.type === 'position' && now - it.release > this.o.thinAfterMs && Date.parse(it.item.at) % 60_000 !== 0) continue;
        batch.push(it.item);
      }
      if (batch.length > 0) {
        const ok = await this.sendBatch(q, key, batch);
        if (!ok) return;
        if (this.r() < 0.02) await this.sendBatch(q, key, batch);
      }
      q.next = end;
    }
  }

  private async sendBatch(q: DeviceQueue, key: string, items: SimItem['item'][]): Promise<boolean> {
    try {
      const answer = await this.request<{ accepted: string[]; duplicates: string[]; rejected: unknown[] }>('POST', `/api/v4/groups/${this.o.groupId}/device/reports`, { 'x-api-key': key }, { items });
      this.stats.batches++;
      this.stats.accepted += answer.accepted.length;
      this.stats.duplicates += answer.duplicates.length;
      this.stats.rejected += answer.rejected.length;
      if (answer.rejected.length > 0 && this.stats.firstRejection === null) {
        this.stats.firstRejection = answer.rejected[0];
        this.o.log(`simulator: the service rejected an item of ${q.deviceId}: ${JSON.stringify(answer.rejected[0])}`);
      }
      return true;
    } catch (err) {
      this.stats.failedRequests++;
      this.o.log(`simulator: ${q.deviceId} could not send (${(err as Error).message}); it keeps its backlog`);
      // Its key was revoked (another simulator started): a new one at a later tick.
      if (err instanceof HttpStatusError && err.status === 401) this.keys.delete(q.deviceId);
      return false;
    }
  }

  private async login(account: { email: string; password: string }): Promise<string> {
    const res = await fetch(`${this.o.baseUrl}/api/v4/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: account.email, password: account.password }).toString(),
    });
    if (!res.ok) throw new Error(`login as ${account.email} failed: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { session_id: string }).session_id;
  }

  /** The devices mounted in vehicles; the keys an earlier run made are revoked. */
  private async findDevices(): Promise<void> {
    const keys = await this.api<{ api_key_id: string; name: string | null; device_id: string | null }[]>('GET', '/api-keys', 'admin');
    for (const k of keys) if (k.name === 'simulator' && k.device_id) await this.api('DELETE', `/api-keys/${k.api_key_id}`, 'admin');
    const devices = await this.api<{ device_id: string; vehicle_id: string | null; archived: boolean }[]>('GET', '/devices', 'admin');
    for (const d of devices) if (d.vehicle_id && !d.archived) this.devices.set(d.vehicle_id, d.device_id);
  }

  /** The device's API key, made on first need; null while key creation is rate limited (429). */
  private async keyOf(deviceId: string): Promise<string | null> {
    const known = this.keys.get(deviceId);
    if (known) return known;
    if (Date.now() < this.keysBlockedUntil) return null;
    try {
      const key = (await this.api<{ value: string }>('POST', '/api-keys', 'admin', { device_id: deviceId, name: 'simulator' })).value;
      this.keys.set(deviceId, key);
      return key;
    } catch (err) {
      if (!(err instanceof HttpStatusError) || err.status !== 429) throw err;
      this.keysBlockedUntil = Date.now() + err.retryAfterSeconds * 1000;
      this.o.log(`simulator: device keys are rate limited; the next ones in ${err.retryAfterSeconds} s (the devices keep their backlog)`);
      return null;
    }
  }

  /** A call as the admin or the reader; an expired session is opened again once. */
  private async api<T>(method: string, path: string, who: 'admin' | 'reader', body?: unknown): Promise<T> {
    const call = () => this.request<T>(method, `/api/v4/groups/${this.o.groupId}${path}`, { authorization: `Bearer ${who === 'admin' ? this.adminToken : this.readerToken}` }, body);
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof HttpStatusError) || err.status !== 401) throw err;
      if (who === 'admin') this.adminToken = await this.login(this.o.admin);
      else this.readerToken = await this.login(this.o.reader);
      return call();
    }
  }

  private async request<T>(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<T> {
    const res = await fetch(`${this.o.baseUrl}${path}`, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    if (!res.ok) throw new HttpStatusError(res.status, `${method} ${path}: ${res.status} ${text.slice(0, 500)}`, Number(res.headers.get('retry-after') ?? 60) || 60);
    return (text ? JSON.parse(text) : null) as T;
  }
}

class HttpStatusError extends Error {
  constructor(readonly status: number, message: string, readonly retryAfterSeconds = 60) {
    super(message);
  }
}

interface PlanningRow {
  trip_id: string;
  start_time: string;
  vehicle_id: string | null;
  driver_id: string | null;
}

/** A clock running `speed` times faster than the real one from `start` (an accelerated run). */
export function acceleratedClock(start: Date, speed: number): () => Date {
  const realStart = Date.now();
  return () => new Date(start.getTime() + (Date.now() - realStart) * speed);
}

