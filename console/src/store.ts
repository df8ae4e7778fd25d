// What several views share: the network of the day, the vehicles on duty, today's trips, the
// fleet's teams; refreshed from the documented endpoints and from the live stream.
import { client, group, ok, type Answer, type Schemas } from './api';
import type { Envelope, LiveStream } from './stream';
import { debounce, setTimezone } from './util';

// The records as the document gives them (a drift fails the type check).
export type Network = Answer<'/api/v4/groups/{group_id}/live-map/network'>;
export type RouteInfo = Network['routes'][number];
export type VehicleOnDuty = Answer<'/api/v4/groups/{group_id}/live-map/vehicles'>[number];
export type TripItem = Schemas['TripOfDay'];

type Listener = () => void;

export class Store {
  network: Network | null = null;
  vehicles = new Map<string, VehicleOnDuty>(); // by device_id
  trips: TripItem[] = [];
  routes = new Map<string, RouteInfo>();
  vehicleTeams = new Map<string, string[]>();
  driverTeams = new Map<string, string[]>();
  teams: { team_id: string; name: string }[] = [];
  private listeners = { vehicles: new Set<Listener>(), trips: new Set<Listener>(), positions: new Set<Listener>() };
  private timers: ReturnType<typeof setInterval>[] = [];

  on(kind: keyof Store['listeners'], fn: Listener): void {
    this.listeners[kind].add(fn);
  }

  emit(kind: keyof Store['listeners']): void {
    for (const fn of this.listeners[kind]) fn();
  }

  /** The service date of the map (the group's current one), YYYY-MM-DD. */
  get date(): string {
    return this.network?.service_date ?? new Date().toISOString().slice(0, 10);
  }

  async load(): Promise<void> {
    this.network = await ok(client.GET('/api/v4/groups/{group_id}/live-map/network', { params: { path: group() } }));
    setTimezone(this.network.timezone);
    this.routes = new Map(this.network.routes.map((r) => [r.route_id, r]));
    await Promise.all([this.refreshVehicles(), this.refreshTrips(), this.loadTeams()]);
    this.timers.push(setInterval(() => void this.refreshVehicles().catch(() => {}), 10_000));
    this.timers.push(setInterval(() => void this.refreshTrips().catch(() => {}), 20_000));
  }

  private async loadTeams(): Promise<void> {
    // Readable by every office role; a role that may not list drivers still filters by vehicle teams.
    const [teams, vehicles, drivers] = await Promise.all([
      ok(client.GET('/api/v4/groups/{group_id}/teams', { params: { path: group() } })).catch(() => []),
      ok(client.GET('/api/v4/groups/{group_id}/vehicles', { params: { path: group() } })).catch(() => []),
      ok(client.GET('/api/v4/groups/{group_id}/drivers', { params: { path: group(), query: { archived: false } } })).catch(() => []),
    ]);
    this.teams = teams;
    this.vehicleTeams = new Map(vehicles.map((v) => [v.id, v.teams]));
    this.driverTeams = new Map(drivers.map((d) => [d.id, d.teams]));
  }

  tripTeams(t: TripItem): string[] {
    const out = new Set<string>();
    for (const v of t.vehicle_ids) for (const team of this.vehicleTeams.get(v) ?? []) out.add(team);
    for (const d of t.driver_ids) for (const team of this.driverTeams.get(d) ?? []) out.add(team);
    return [...out];
  }

  async refreshVehicles(): Promise<void> {
    const list = await ok(client.GET('/api/v4/groups/{group_id}/live-map/vehicles', { params: { path: group() } }));
    const seen = new Set<string>();
    for (const v of list) {
      seen.add(v.device_id);
      const known = this.vehicles.get(v.device_id);
      // A newer position from the stream wins over the snapshot's.
      if (known?.position?.at && v.position?.at && known.position.at > v.position.at) v.position = known.position;
      this.vehicles.set(v.device_id, v);
    }
    for (const d of [...this.vehicles.keys()]) if (!seen.has(d)) this.vehicles.delete(d);
    this.emit('vehicles');
  }

  async refreshTrips(): Promise<void> {
    this.trips = await ok(client.GET('/api/v4/groups/{group_id}/trips', { params: { path: group(), query: { date: this.date.replace(/-/g, '') } } }));
    this.emit('trips');
  }

  /** Positions from the stream; other device messages and trip updates ask for fresh snapshots. */
  follow(stream: LiveStream): void {
    const vehiclesSoon = debounce(() => void this.refreshVehicles().catch(() => {}), 2000);
    const tripsSoon = debounce(() => void this.refreshTrips().catch(() => {}), 3000);
    const positionsSoon = debounce(() => this.emit('positions'), 250);
    stream.on((m: Envelope) => {
      const d = m.data ?? {};
      if (m.type === 'vehicle_position') {
        const v = this.vehicles.get(String(d['device_id']));
        if (!v) return vehiclesSoon();
        if (v.position?.at && v.position.at > m.at) return;
        v.position = { lat: Number(d['lat']), lon: Number(d['lon']), bearing: (d['bearing'] as number) ?? null, speed_kmh: (d['speed_kmh'] as number) ?? null, at: m.at };
        if (d['trip_id'] && d['trip_id'] !== v.trip?.trip_id) vehiclesSoon();
        positionsSoon();
      } else if (['trip_event', 'trip_start', 'trip_end'].includes(m.type)) {
        vehiclesSoon();
        tripsSoon();
      } else if (['duty_sign_on', 'duty_sign_off'].includes(m.type)) {
        vehiclesSoon();
      } else if (m.type === 'trip_update') {
        tripsSoon();
      }
    });
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  /** The latest position time of any vehicle (the network's "now" as the reports tell it). */
  latestReport(): number | null {
    let best: number | null = null;
    for (const v of this.vehicles.values()) {
      const t = v.position?.at ? Date.parse(v.position.at) : NaN;
      if (Number.isFinite(t) && (best === null || t > best)) best = t;
    }
    return best;
  }
}
