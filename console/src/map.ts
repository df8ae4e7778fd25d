// View 1: the network map. MapLibre GL (WebGL) with a style built in (a plain background, no tile
// server, no glyphs: it works offline); the GTFS shapes and stops and the vehicles are GeoJSON
// sources. Vehicles are coloured by delay and ringed when flagged (bunching, gap: headway.ts).
import { Map as MapLibre, NavigationControl, setWorkerUrl, type GeoJSONSource, type GeoJSONSourceSpecification, type MapLayerMouseEvent } from 'maplibre-gl';
import workerUrl from 'maplibre-gl/dist/maplibre-gl-worker.mjs?url';
import 'maplibre-gl/dist/maplibre-gl.css';
import { headwayFlags, type HeadwayFlag, type RunningVehicle } from './headway';
import type { Store, VehicleOnDuty } from './store';
import { clock, delayClass, delayText, h } from './util';

setWorkerUrl(workerUrl);

export const DELAY_COLOURS = { early: '#1f6fd1', 'on-time': '#1a8a3a', late: '#d9480f', unknown: '#6b6b6b' } as const;

type Feature = { type: 'Feature'; properties: Record<string, unknown>; geometry: { type: string; coordinates: unknown } };
const collection = (features: Feature[]) => ({ type: 'FeatureCollection' as const, features }) as unknown as Exclude<GeoJSONSourceSpecification['data'], string>;

export class MapView {
  map: MapLibre | null = null;
  flags: HeadwayFlag[] = [];
  private ready: Promise<void> | null = null;
  private side: HTMLElement;
  private selected: string | null = null;

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
        // Tiled up to zoom 12 only (overzoomed beyond: ~1 m precision): a redraw of thousands of
        // vehicles cuts fewer tiles in the worker.
        map.addSource('vehicles', { type: 'geojson', data: collection([]), maxzoom: 12 });
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

  /** The vehicles of the store as GeoJSON, with the headway flags of the moment. */
  vehicleFeatures(): Feature[] {
    const running: RunningVehicle[] = [];
    const departures = new Map<string, { route_id: string; direction_id: number | null; departure: number }>();
    const schedule = this.store.trips.filter((t) => t.status !== 'cancelled' && t.departure_time && t.route_id).map((t) => {
      const d = { route_id: t.route_id!, direction_id: t.direction_id, departure: Date.parse(t.departure_time!) / 1000 };
      departures.set(`${t.id}|${t.start_time}`, d);
      if (!departures.has(t.id)) departures.set(t.id, d);
      return d;
    });
    for (const v of this.store.vehicles.values()) {
      if (!v.trip || !v.position) continue;
      const d = (v.trip.start_time && departures.get(`${v.trip.trip_id}|${v.trip.start_time}`)) || departures.get(v.trip.trip_id);
      if (d) running.push({ ...d, vehicle_id: v.vehicle_id, delay_seconds: v.trip.delay_seconds });
    }
    this.flags = headwayFlags(schedule, running);
    const flagOf = new Map(this.flags.map((f) => [f.vehicle_id, f.kind]));
    const out: Feature[] = [];
    for (const v of this.store.vehicles.values()) {
      if (!v.position) continue;
      out.push({
        type: 'Feature',
        properties: { device_id: v.device_id, vehicle_id: v.vehicle_id, delay_class: v.trip ? delayClass(v.trip.delay_seconds) : 'unknown', flag: flagOf.get(v.vehicle_id) ?? '' },
        geometry: { type: 'Point', coordinates: [v.position.lon, v.position.lat] },
      });
    }
    return out;
  }

  /** Replace the vehicles' layer data (used by the benchmark with synthetic vehicles too). */
  setVehicles(features: Feature[]): void {
    (this.map?.getSource('vehicles') as GeoJSONSource | undefined)?.setData(collection(features));
  }

  private update(): void {
    if (!this.map?.getSource('vehicles')) return;
    const features = this.vehicleFeatures();
    this.setVehicles(features);
    this.root.dataset['vehicles'] = String(features.length);
    this.renderSide();
  }

  private select(deviceId: string): void {
    this.selected = deviceId;
    this.renderSide();
  }

  private renderSide(): void {
    const vehicles = [...this.store.vehicles.values()];
    const onTrip = vehicles.filter((v) => v.trip);
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
