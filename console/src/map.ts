// View 1: the network map. MapLibre GL (WebGL) with a style built in (a plain background, no tile
// server, no glyphs: it works offline); the GTFS shapes and stops and the vehicles are GeoJSON
// sources. Vehicles are coloured by delay and ringed when flagged (bunching, gap: headway.ts).
import { Map as MapLibre, NavigationControl, setWorkerUrl, type GeoJSONSource, type GeoJSONSourceSpecification, type MapLayerMouseEvent } from 'maplibre-gl';
import workerUrl from 'maplibre-gl/dist/maplibre-gl-worker.mjs?url';
import 'maplibre-gl/dist/maplibre-gl.css';
import { departureIndex, flagsOf, type DepartureIndex, type HeadwayFlag, type RunningVehicle } from './headway';
import type { Store, TripItem, VehicleOnDuty } from './store';
import { clock, delayClass, delayText, h } from './util';

setWorkerUrl(workerUrl);

export const DELAY_COLOURS = { early: '#1f6fd1', 'on-time': '#1a8a3a', late: '#d9480f', unknown: '#6b6b6b' } as const;

type Feature = { type: 'Feature'; id?: number; properties: Record<string, unknown>; geometry: { type: string; coordinates: unknown } };
type Diff = Parameters<GeoJSONSource['updateData']>[0];
/** Over this share of the vehicles changed, an update replaces the whole data instead of a diff. */
const FULL_DATA_SHARE = 0.5;

/** What the vehicles' layer holds for one vehicle (by device_id): the diff of the next update is against it. */
interface Drawn { id: number; lon: number; lat: number; delay_class: string; flag: string }
interface Departure { route_id: string; direction_id: number | null; departure: number }
const collection = (features: Feature[]) => ({ type: 'FeatureCollection' as const, features }) as unknown as Exclude<GeoJSONSourceSpecification['data'], string>;

export class MapView {
  map: MapLibre | null = null;
  flags: HeadwayFlag[] = [];
  private ready: Promise<void> | null = null;
  private side: HTMLElement;
  private selected: string | null = null;
  /** The layer's content, by device_id, and the feature ids given so far. */
  private drawn = new Map<string, Drawn>();
  private nextId = 1;
  /** The schedule's index for the headway flags, rebuilt only when the list of trips is new. */
  private index: { trips: TripItem[]; departures: DepartureIndex; byTrip: Map<string, Departure> } | null = null;
  private sideKey = '';
  /** false: every update replaces the whole data (setData), as before; kept for the benchmark's comparison. */
  diffUpdates = true;
  /** What the latest update sent: features added, updated, removed (or replaced by setData). */
  lastUpdate = { added: 0, updated: 0, removed: 0, replaced: 0 };

  constructor(private root: HTMLElement, private store: Store, private openTrip: (tripId: string) => void) {
    this.side = h('aside', { class: 'map-side', 'aria-label': 'Vehicles and flags' });
  }

  mount(): Promise<void> {
    if (this.ready) return this.ready;
    const canvas = h('div', { id: 'map', 'data-testid': 'map', role: 'region', 'aria-label': 'Map of the network: routes, stops and vehicles' });
    this.root.replaceChildren(h('div', { class: 'map-layout' }, canvas, this.side));
    const map = new MapLibre({
      container: canvas,
      style: { version: 8, sources: {}, layers: [{ id: 'background', type: 'background', paint: { 'background-color': '#f2f1ec' } }] },
      center: [0, 0],
      zoom: 1,
      attributionControl: false,
      maxPitch: 0,
    });
    this.map = map;
    map.addControl(new NavigationControl({ showCompass: false }), 'top-left');
    this.ready = new Promise((resolve) => {
      map.on('load', () => {
        this.drawNetwork();
        // Feature ids (numbers given per device) let an update send a diff (updateData): only the
        // vehicles that moved, changed colour or flag, came or went cross to the worker. Tiled up
        // to zoom 10 only (overzoomed beyond; about 5 m of precision): each update lays out fewer
        // tiles again (bench:console measured z8, z10, z12: docs/console.md).
        map.addSource('vehicles', { type: 'geojson', data: collection([]), maxzoom: 10 });
        map.addLayer({
          id: 'vehicles', type: 'circle', source: 'vehicles',
          paint: {
            'circle-radius': ['interpolate', ['linear'], ['zoom'], 10, 4, 14, 8],
            'circle-color': ['match', ['get', 'delay_class'], 'early', DELAY_COLOURS.early, 'on-time', DELAY_COLOURS['on-time'], 'late', DELAY_COLOURS.late, DELAY_COLOURS.unknown],
            'circle-stroke-width': ['match', ['get', 'flag'], 'bunching', 4, 'gap', 4, 1],
            'circle-stroke-color': ['match', ['get', 'flag'], 'bunching', '#7b1fa2', 'gap', '#111111', '#ffffff'],
          },
        });
        map.on('click', 'vehicles', (e: MapLayerMouseEvent) => {
          const device = e.features?.[0]?.properties?.['device_id'];
          if (typeof device === 'string') this.select(device);
        });
        map.on('mouseenter', 'vehicles', () => (map.getCanvas().style.cursor = 'pointer'));
        map.on('mouseleave', 'vehicles', () => (map.getCanvas().style.cursor = ''));
        this.update();
        resolve();
      });
    });
    this.store.on('vehicles', () => this.update());
    this.store.on('positions', () => this.update());
    this.store.on('trips', () => this.update());
    return this.ready;
  }

  resize(): void {
    this.map?.resize();
  }

  private drawNetwork(): void {
    const map = this.map!;
    const net = this.store.network!;
    const lines: Feature[] = net.routes.flatMap((r) => r.shapes.map((coords) => ({ type: 'Feature' as const, properties: { route_id: r.route_id, color: `#${r.color || '888888'}` }, geometry: { type: 'LineString', coordinates: coords } })));
    const stops: Feature[] = net.stops.map((s) => ({ type: 'Feature', properties: { stop_id: s.stop_id, name: s.name }, geometry: { type: 'Point', coordinates: [s.lon, s.lat] } }));
    map.addSource('routes', { type: 'geojson', data: collection(lines) });
    map.addSource('stops', { type: 'geojson', data: collection(stops) });
    map.addLayer({ id: 'routes', type: 'line', source: 'routes', paint: { 'line-color': ['get', 'color'], 'line-width': 3, 'line-opacity': 0.7 }, layout: { 'line-cap': 'round', 'line-join': 'round' } });
    map.addLayer({ id: 'stops', type: 'circle', source: 'stops', paint: { 'circle-radius': 2.5, 'circle-color': '#ffffff', 'circle-stroke-color': '#444444', 'circle-stroke-width': 1 } });
    const points = [...lines.flatMap((f) => f.geometry.coordinates as [number, number][]), ...net.stops.map((s) => [s.lon, s.lat] as [number, number])];
    if (points.length) {
      const lons = points.map((p) => p[0]);
      const lats = points.map((p) => p[1]);
      map.fitBounds([[Math.min(...lons), Math.min(...lats)], [Math.max(...lons), Math.max(...lats)]], { padding: 30, animate: false });
    }
  }

  /** The schedule's departures for the headway flags: indexed once per new list of trips. */
  private scheduleIndex(): NonNullable<MapView['index']> {
    const trips = this.store.trips;
    if (this.index?.trips === trips) return this.index;
    const byTrip = new Map<string, Departure>();
    const schedule: Departure[] = [];
    for (const t of trips) {
      if (t.status === 'cancelled' || !t.departure_time || !t.route_id) continue;
      const d = { route_id: t.route_id, direction_id: t.direction_id, departure: Date.parse(t.departure_time) / 1000 };
      schedule.push(d);
      byTrip.set(`${t.id}|${t.start_time}`, d);
      if (!byTrip.has(t.id)) byTrip.set(t.id, d);
    }
    this.index = { trips, departures: departureIndex(schedule), byTrip };
    return this.index;
  }

  /** The headway flags of the moment (the vehicles on a trip against the indexed schedule). */
  computeFlags(): HeadwayFlag[] {
    const { departures, byTrip } = this.scheduleIndex();
    const running: RunningVehicle[] = [];
    for (const v of this.store.vehicles.values()) {
      if (!v.trip || !v.position) continue;
      const d = (v.trip.start_time && byTrip.get(`${v.trip.trip_id}|${v.trip.start_time}`)) || byTrip.get(v.trip.trip_id);
      if (d) running.push({ ...d, vehicle_id: v.vehicle_id, delay_seconds: v.trip.delay_seconds });
    }
    this.flags = flagsOf(departures, running);
    return this.flags;
  }

  /** The vehicles of the store as GeoJSON features (with their ids), with the headway flags of the moment. */
  vehicleFeatures(): Feature[] {
    const flagOf = new Map(this.computeFlags().map((f) => [f.vehicle_id, f.kind]));
    const out: Feature[] = [];
    for (const v of this.store.vehicles.values()) {
      if (!v.position) continue;
      const id = this.drawn.get(v.device_id)?.id ?? this.nextId++;
      out.push({
        type: 'Feature', id,
        properties: { device_id: v.device_id, vehicle_id: v.vehicle_id, delay_class: v.trip ? delayClass(v.trip.delay_seconds) : 'unknown', flag: flagOf.get(v.vehicle_id) ?? '' },
        geometry: { type: 'Point', coordinates: [v.position.lon, v.position.lat] },
      });
    }
    return out;
  }

  /** Replace the vehicles' layer data (features with ids; the diffs that follow are against them). */
  setVehicles(features: Feature[]): Promise<void> {
    this.drawn.clear();
    for (const f of features) {
      const [lon, lat] = f.geometry.coordinates as [number, number];
      const id = f.id ?? this.nextId++;
      f.id = id;
      this.drawn.set(String(f.properties['device_id']), { id, lon, lat, delay_class: String(f.properties['delay_class']), flag: String(f.properties['flag']) });
    }
    this.lastUpdate = { added: 0, updated: 0, removed: 0, replaced: features.length };
    return (this.map?.getSource('vehicles') as GeoJSONSource | undefined)?.setData(collection(features)) ?? Promise.resolve();
  }

  /**
   * Bring the vehicles' layer to the store by a diff (GeoJSONSource.updateData): features added
   * for the vehicles come on duty, removed for those gone, and for the others a new geometry and
   * properties only where they changed. No per-vehicle DOM; the flags from the indexed schedule.
   */
  drawVehicles(): Promise<void> {
    const source = this.map?.getSource('vehicles') as GeoJSONSource | undefined;
    if (!source) return Promise.resolve();
    if (!this.diffUpdates) return this.setVehicles(this.vehicleFeatures());
    const flagOf = new Map(this.computeFlags().map((f) => [f.vehicle_id, f.kind]));
    const add: Feature[] = [];
    const update: NonNullable<Diff['update']> = [];
    const seen = new Set<string>();
    for (const v of this.store.vehicles.values()) {
      if (!v.position) continue;
      seen.add(v.device_id);
      const { lon, lat } = v.position;
      const delay_class = v.trip ? delayClass(v.trip.delay_seconds) : 'unknown';
      const flag = flagOf.get(v.vehicle_id) ?? '';
      const was = this.drawn.get(v.device_id);
      if (!was) {
        const id = this.nextId++;
        this.drawn.set(v.device_id, { id, lon, lat, delay_class, flag });
        add.push({ type: 'Feature', id, properties: { device_id: v.device_id, vehicle_id: v.vehicle_id, delay_class, flag }, geometry: { type: 'Point', coordinates: [lon, lat] } });
        continue;
      }
      const moved = was.lon !== lon || was.lat !== lat;
      const props: { key: string; value: string }[] = [];
      if (was.delay_class !== delay_class) props.push({ key: 'delay_class', value: delay_class });
      if (was.flag !== flag) props.push({ key: 'flag', value: flag });
      if (!moved && !props.length) continue;
      update.push({ id: was.id, ...(moved ? { newGeometry: { type: 'Point', coordinates: [lon, lat] } } : {}), ...(props.length ? { addOrUpdateProperties: props } : {}) });
      Object.assign(was, { lon, lat, delay_class, flag });
    }
    const remove: number[] = [];
    for (const [device, d] of this.drawn) {
      if (seen.has(device)) continue;
      remove.push(d.id);
      this.drawn.delete(device);
    }
    // Most vehicles changed (a new snapshot after a while away, a replay): the whole data in one
    // message is cheaper for the worker than a diff touching every feature (measured).
    if (update.length + add.length > FULL_DATA_SHARE * this.drawn.size) return this.setVehicles(this.vehicleFeaturesFromDrawn());
    this.lastUpdate = { added: add.length, updated: update.length, removed: remove.length, replaced: 0 };
    if (!add.length && !update.length && !remove.length) return Promise.resolve();
    return source.updateData({ ...(add.length ? { add: add as Diff['add'] } : {}), ...(update.length ? { update } : {}), ...(remove.length ? { remove } : {}) });
  }

  /** The features of what drawVehicles() has just brought up to date (for a whole replacement). */
  private vehicleFeaturesFromDrawn(): Feature[] {
    const out: Feature[] = [];
    for (const [device, d] of this.drawn) {
      const v = this.store.vehicles.get(device);
      out.push({ type: 'Feature', id: d.id, properties: { device_id: device, vehicle_id: v?.vehicle_id ?? '', delay_class: d.delay_class, flag: d.flag }, geometry: { type: 'Point', coordinates: [d.lon, d.lat] } });
    }
    return out;
  }

  private update(): void {
    if (!this.map?.getSource('vehicles')) return;
    void this.drawVehicles().catch(() => {});
    this.root.dataset['vehicles'] = String(this.drawn.size);
    this.renderSide();
  }

  private select(deviceId: string): void {
    this.selected = deviceId;
    this.renderSide();
  }

  private renderSide(): void {
    const vehicles = [...this.store.vehicles.values()];
    const onTrip = vehicles.filter((v) => v.trip);
    // Rebuilt only when what it says changed (positions alone change nothing in it but the detail's time).
    const shown = this.selected ? this.store.vehicles.get(this.selected) : undefined;
    const key = `${vehicles.length}|${onTrip.length}|${this.flags.map((f) => `${f.vehicle_id}:${f.kind}:${Math.round(f.actual_headway_seconds / 60)}:${f.ahead_vehicle_id}`).join(',')}|${this.selected}|${shown?.position?.at}|${shown?.trip?.trip_id}|${shown?.trip?.delay_seconds}`;
    if (key === this.sideKey) return;
    this.sideKey = key;
    const byVehicle = new Map(vehicles.map((v) => [v.vehicle_id, v]));
    const name = (id: string) => `bus ${byVehicle.get(id)?.fleet_number ?? id}`;
    const legend = h('ul', { class: 'legend', 'aria-label': 'Legend' },
      ...(['early', 'on-time', 'late', 'unknown'] as const).map((k) => h('li', {}, h('span', { class: 'dot', style: `background:${DELAY_COLOURS[k]}` }), { early: 'early (over 1 min)', 'on-time': 'on time', late: 'late (over 3 min)', unknown: 'no trip or no delay yet' }[k])),
      h('li', {}, h('span', { class: 'dot ring bunching' }), 'bunching: under a third of the headway'),
      h('li', {}, h('span', { class: 'dot ring gap' }), 'gap: over twice the headway'));
    const flags = h('ul', { class: 'flags', 'data-testid': 'flags' }, ...this.flags.map((f) =>
      h('li', { 'data-flag': f.kind }, `${f.kind === 'bunching' ? 'Bunching' : 'Gap'}: ${name(f.vehicle_id)} ${Math.round(f.actual_headway_seconds / 60)} min behind ${name(f.ahead_vehicle_id)} (scheduled ${Math.round(f.scheduled_headway_seconds / 60)} min)`)));
    const parts: (Node | null)[] = [
      h('h2', {}, 'Vehicles on duty'),
      h('p', { 'data-testid': 'vehicle-count' }, `${vehicles.length} on duty, ${onTrip.length} on a trip`),
      legend,
      h('h3', {}, `Headway flags (${this.flags.length})`),
      this.flags.length ? flags : h('p', {}, 'None.'),
    ];
    const v = this.selected ? this.store.vehicles.get(this.selected) : undefined;
    if (v) parts.push(this.detail(v));
    this.side.replaceChildren(...parts.filter((p): p is Node => p !== null));
  }

  private detail(v: VehicleOnDuty): HTMLElement {
    return h('div', { class: 'vehicle-detail', 'data-testid': 'vehicle-detail' },
      h('h3', {}, `Bus ${v.fleet_number ?? v.vehicle_id}`),
      h('p', {}, `Driver ${v.driver_name ?? v.driver_id}, signed on at ${clock(v.signed_on_at)}; last position ${clock(v.position?.at, true)}.`),
      v.trip ? h('p', {}, `Line ${v.trip.route_short_name ?? v.trip.route_id ?? '?'} to ${v.trip.headsign ?? '?'}: `, h('span', { class: `delay ${delayClass(v.trip.delay_seconds)}` }, delayText(v.trip.delay_seconds)), ' ',
        h('button', { type: 'button', onclick: () => this.openTrip(v.trip!.trip_id) }, `Open trip ${v.trip.trip_id}`)) : h('p', {}, 'No trip.'));
  }
}
