// What several views share: the network of the day, the vehicles on duty, today's trips, the
// fleet's teams; refreshed from the documented endpoints and from the live stream.
import { api } from './api';
import type { Envelope, LiveStream } from './stream';
import { debounce, setTimezone } from './util';

export interface RouteInfo { route_id: string; short_name: string | null; long_name: string | null; color: string | null; text_color: string | null; shapes: [number, number][][] }
export interface Network { gtfs_id: string | null; service_date: string; timezone: string; routes: RouteInfo[]; stops: { stop_id: string; name: string | null; lat: number; lon: number }[] }
export interface VehicleOnDuty {
  duty_id: string; device_id: string; vehicle_id: string; fleet_number: string | null; driver_id: string; driver_name: string | null; signed_on_at: string;
  position: { lat: number; lon: number; bearing: number | null; speed_kmh: number | null; at: string | null } | null;
  trip: { trip_id: string; service_date: string; start_time: string | null; route_id: string | null; route_short_name: string | null; route_color: string | null; headsign: string | null; delay_seconds: number | null; last_stop_sequence: number | null; last_event: string | null } | null;
}
export interface TripItem {
  kind: 'recorded' | 'scheduled'; id: string; service_date: string; start_time: string | null; route_id: string | null; headsign: string | null; direction_id: number | null; block_id: string | null;
  departure_time: string | null; arrival_time: string | null; status: string; delay_seconds: number | null; started_at: string | null; ended_at: string | null;
  recorded_stops: number; planned_stops: number; vehicle_ids: string[]; driver_ids: string[]; device_ids: string[];
}

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
    this.network = await api<Network>('/live-map/network');
    setTimezone(this.network.timezone);
    this.routes = new Map(this.network.routes.map((r) => [r.route_id, r]));
    await Promise.all([this.refreshVehicles(), this.refreshTrips(), this.loadTeams()]);
    this.timers.push(setInterval(() => void this.refreshVehicles().catch(() => {}), 10_000));
    this.timers.push(setInterval(() => void this.refreshTrips().catch(() => {}), 20_000));
  }

  private async loadTeams(): Promise<void> {
    // Readable by every office role; a role that may not list drivers still filters by vehicle teams.
    const [teams, vehicles, drivers] = await Promise.all([
      api<{ team_id: string; name: string }[]>('/teams').catch(() => []),
      api<{ id: string; teams: string[] }[]>('/vehicles').catch(() => []),
      api<{ id: string; teams: string[] }[]>('/drivers').catch(() => []),
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
    const list = await api<VehicleOnDuty[]>('/live-map/vehicles');
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
    this.trips = await api<TripItem[]>(`/trips?date=${this.date.replace(/-/g, '')}`);
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
