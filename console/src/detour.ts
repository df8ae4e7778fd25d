// View 6: the detour editor (#detour/<trip_id>/<date>): on a map of the trip's route, choose the
// stop after which the trip leaves its route and the stop where it rejoins it, the stops between
// that are still served, click the path driven, preview it, and publish it as a trip update of
// kind detour for a date range (PUT trip-updates). GTFS-Realtime TripModifications and SIRI carry
// it at the next refresh. Dispatch roles only (the API refuses the others).
import { Map as MapLibre, NavigationControl, type GeoJSONSource, type GeoJSONSourceSpecification, type MapMouseEvent } from 'maplibre-gl';
import { canAct, client, currentSession, group, newId, ok, type Answer } from './api';
import type { Store } from './store';
import { clock, h } from './util';

type TripAnswer = Answer<'/api/v4/groups/{group_id}/trips/{trip_id}'>;
/** A stop of the GTFS trip (the stops an update adds have no stop_sequence: not offered here). */
type StopOfTrip = Extract<TripAnswer['delay'][number], { stop_sequence: number }>;
type Trip = Omit<TripAnswer, 'delay'> & { delay: StopOfTrip[] };
const scheduledStop = (s: TripAnswer['delay'][number]): s is StopOfTrip => 'stop_sequence' in s && typeof s.stop_sequence === 'number';

type Data = Exclude<GeoJSONSourceSpecification['data'], string>;
const fc = (features: unknown[]) => ({ type: 'FeatureCollection', features }) as unknown as Data;
const line = (coords: number[][]) => ({ type: 'Feature', properties: {}, geometry: { type: 'LineString', coordinates: coords } });
const point = (c: [number, number], props: Record<string, unknown>) => ({ type: 'Feature', properties: props, geometry: { type: 'Point', coordinates: c } });

export class DetourEditor {
  map: MapLibre | null = null;
  trip: Trip | null = null;
  /** The points clicked, in order ([lon, lat]). */
  points: [number, number][] = [];
  from = 0;
  to = 0;
  served = new Set<number>();

  constructor(private root: HTMLElement, private store: Store) {}

  async show(tripId: string, date: string): Promise<void> {
    this.map?.remove();
    this.map = null;
    this.points = [];
    this.served.clear();
    if (!canAct(currentSession())) {
      this.root.replaceChildren(h('h2', {}, 'Detour editor'), h('p', {}, 'Only the roles that dispatch (admin, operator, regulator) can publish a detour.'));
      return;
    }
    this.root.replaceChildren(h('p', {}, `Loading trip ${tripId}…`));
    const trip = await ok(client.GET('/api/v4/groups/{group_id}/trips/{trip_id}', { params: { path: { ...group(), trip_id: tripId }, query: { date } } }));
    this.trip = { ...trip, delay: trip.delay.filter(scheduledStop) };
    const stops = this.trip.delay;
    this.from = stops[Math.min(1, stops.length - 1)]?.stop_sequence ?? 0;
    this.to = stops[Math.min(4, stops.length - 1)]?.stop_sequence ?? 0;
    this.render();
  }

  private where(stopId: string): [number, number] | undefined {
    const s = this.store.network?.stops.find((x) => x.stop_id === stopId);
    return s ? [s.lon, s.lat] : undefined;
  }

  /** The path published: the stop left after, the points clicked, the stop rejoined. */
  path(): [number, number][] {
    const t = this.trip!;
    const a = t.delay.find((s) => s.stop_sequence === this.from);
    const b = t.delay.find((s) => s.stop_sequence === this.to);
    const pa = a && this.where(a.stop_id);
    const pb = b && this.where(b.stop_id);
    return [...(pa ? [pa] : []), ...this.points, ...(pb ? [pb] : [])];
  }

  skipped(): number[] {
    return this.trip!.delay.filter((s) => s.stop_sequence > this.from && s.stop_sequence < this.to && !this.served.has(s.stop_sequence)).map((s) => s.stop_sequence);
  }

  private render(): void {
    const t = this.trip!;
    const label = (s: StopOfTrip) => `${s.stop_sequence}. ${s.stop_name ?? s.stop_id} (${clock(s.scheduled_at)})`;
    const fromSel = h('select', { name: 'from', onchange: (e) => {
      this.from = Number((e.target as HTMLSelectElement).value);
      this.renderStops();
    } }, ...t.delay.slice(0, -1).map((s) => h('option', { value: s.stop_sequence, selected: s.stop_sequence === this.from }, label(s))));
    const toSel = h('select', { name: 'to', onchange: (e) => {
      this.to = Number((e.target as HTMLSelectElement).value);
      this.renderStops();
    } }, ...t.delay.slice(1).map((s) => h('option', { value: s.stop_sequence, selected: s.stop_sequence === this.to }, label(s))));
    const start = h('input', { type: 'date', name: 'start_date', value: t.service_date, required: true });
    const end = h('input', { type: 'date', name: 'end_date', value: t.service_date, required: true });
    const name = h('input', { name: 'name', maxlength: 200, value: 'Detour', 'aria-label': 'Name of the detour' });
    const header = h('input', { name: 'header', maxlength: 200, placeholder: 'Message for passengers (optional)', 'aria-label': 'Message for passengers' });
    const result = h('p', { role: 'status', 'data-testid': 'detour-result' });
    const canvas = h('div', { id: 'detour-map', 'data-testid': 'detour-map', role: 'region', 'aria-label': 'Map of the route: click to add the points of the detour\'s path' });
    this.root.replaceChildren(
      h('p', {}, h('a', { href: `#trip/${encodeURIComponent(t.id)}/${t.service_date}` }, `← Trip ${t.id}`)),
      h('h2', {}, `Detour of ${t.formatted_name} · ${t.id}`),
      h('form', { class: 'filters', 'aria-label': 'Where the detour leaves and rejoins the route', onsubmit: (e) => e.preventDefault() },
        h('label', {}, 'Leaves the route after ', fromSel), h('label', {}, 'Rejoins it at ', toSel)),
      h('fieldset', { class: 'served', 'data-testid': 'detour-stops' }, h('legend', {}, 'Stops between (tick those still served)')),
      h('div', { class: 'detour-layout' }, canvas, h('div', {},
        h('p', { 'data-testid': 'detour-points' }, 'Click on the map to add the points of the path, in order.'),
        h('button', { type: 'button', onclick: () => {
          this.points.pop();
          this.preview();
        } }, 'Undo the last point'), ' ',
        h('button', { type: 'button', onclick: () => {
          this.points = [];
          this.preview();
        } }, 'Clear the path'),
        h('form', { class: 'publish', onsubmit: (e) => {
          e.preventDefault();
          void this.publish(start.value, end.value, name.value, header.value, result);
        } },
        h('label', {}, 'From ', start), ' ', h('label', {}, 'to ', end), h('br'), name, ' ', header, h('br'),
        h('button', { type: 'submit', 'data-action': 'detour' }, 'Publish the detour')),
        result)),
    );
    this.renderStops();
    this.drawMap(canvas);
  }

  private renderStops(): void {
    const box = this.root.querySelector('[data-testid=detour-stops]')!;
    const between = this.trip!.delay.filter((s) => s.stop_sequence > this.from && s.stop_sequence < this.to);
    box.replaceChildren(box.querySelector('legend')!, ...(between.length ? between.map((s) => h('label', {}, h('input', { type: 'checkbox', name: 'served', value: s.stop_sequence, checked: this.served.has(s.stop_sequence), onchange: (e) => {
      if ((e.target as HTMLInputElement).checked) this.served.add(s.stop_sequence);
      else this.served.delete(s.stop_sequence);
      this.preview();
    } }), ` ${s.stop_sequence}. ${s.stop_name ?? s.stop_id}`)) : [h('span', {}, 'No stop between: choose a later stop to rejoin at.')]));
    this.preview();
  }

  private drawMap(canvas: HTMLElement): void {
    const t = this.trip!;
    const route = this.store.routes.get(t.route?.id ?? '');
    const map = new MapLibre({ container: canvas, style: { version: 8, sources: {}, layers: [{ id: 'background', type: 'background', paint: { 'background-color': '#f2f1ec' } }] }, center: [0, 0], zoom: 1, attributionControl: false });
    this.map = map;
    map.addControl(new NavigationControl({ showCompass: false }), 'top-left');
    map.on('load', () => {
      map.addSource('route', { type: 'geojson', data: fc((route?.shapes ?? []).map(line)) });
      map.addLayer({ id: 'route', type: 'line', source: 'route', paint: { 'line-color': `#${route?.color || '888888'}`, 'line-width': 4, 'line-opacity': 0.5 } });
      map.addSource('stops', { type: 'geojson', data: fc([]) });
      map.addLayer({ id: 'stops', type: 'circle', source: 'stops', paint: { 'circle-radius': 5, 'circle-color': ['match', ['get', 'role'], 'skipped', '#b23c0c', 'end', '#1f3a93', '#ffffff'], 'circle-stroke-color': '#333', 'circle-stroke-width': 1 } });
      map.addSource('detour', { type: 'geojson', data: fc([]) });
      map.addLayer({ id: 'detour', type: 'line', source: 'detour', paint: { 'line-color': '#7b1fa2', 'line-width': 4, 'line-dasharray': [2, 1] } });
      map.addLayer({ id: 'detour-points', type: 'circle', source: 'detour', filter: ['==', ['geometry-type'], 'Point'], paint: { 'circle-radius': 4, 'circle-color': '#7b1fa2' } });
      const coords = t.delay.map((s) => this.where(s.stop_id)).filter((c): c is [number, number] => !!c);
      if (coords.length) {
        const lons = coords.map((c) => c[0]);
        const lats = coords.map((c) => c[1]);
        map.fitBounds([[Math.min(...lons), Math.min(...lats)], [Math.max(...lons), Math.max(...lats)]], { padding: 40, animate: false });
      }
      map.on('click', (e: MapMouseEvent) => {
        this.points.push([Math.round(e.lngLat.lng * 1e6) / 1e6, Math.round(e.lngLat.lat * 1e6) / 1e6]);
        this.preview();
      });
      this.preview();
    });
  }

  /** Redraw the path, the stops left out and the summary. */
  private preview(): void {
    const t = this.trip!;
    const skipped = new Set(this.skipped());
    const note = this.root.querySelector('[data-testid=detour-points]');
    if (note) note.textContent = `${this.points.length} point(s) clicked; the path has ${this.path().length} points; ${skipped.size} stop(s) left out.`;
    const map = this.map;
    if (!map?.getSource('detour')) return;
    (map.getSource('detour') as GeoJSONSource).setData(fc([line(this.path()), ...this.points.map((p) => point(p, {}))]));
    (map.getSource('stops') as GeoJSONSource).setData(fc(t.delay.flatMap((s) => {
      const c = this.where(s.stop_id);
      const role = skipped.has(s.stop_sequence) ? 'skipped' : s.stop_sequence === this.from || s.stop_sequence === this.to ? 'end' : 'served';
      return c ? [point(c, { role })] : [];
    })));
  }

  private async publish(start: string, end: string, name: string, header: string, result: HTMLElement): Promise<void> {
    const t = this.trip!;
    const skipped = this.skipped();
    if (this.to <= this.from) return void (result.textContent = 'The stop where the trip rejoins must come after the one it leaves.');
    if (skipped.length === 0) return void (result.textContent = 'A detour leaves out at least one stop: untick one.');
    if (this.points.length === 0) return void (result.textContent = 'Click the path on the map first.');
    result.textContent = 'Publishing…';
    try {
      const frequency = this.store.trips.filter((x) => x.id === t.id).length > 1;
      await ok(client.PUT('/api/v4/groups/{group_id}/trip-updates', { params: { path: group() }, body: {
        update_id: newId('console-detour'), kind: 'detour', trip_id: t.id, ...(frequency && t.start_time ? { start_time: t.start_time } : {}), start_date: start, end_date: end,
        detour: { name: name || 'Detour', shape: this.path(), skipped_stops: skipped.map((s) => ({ stop_sequence: s })), added_stops: [] },
        ...(header ? { message: { header, severity: 'warning' as const, cause: 'UNKNOWN_CAUSE' as const } } : {}),
      } }));
      result.textContent = `Detour published for ${start}${end !== start ? ` to ${end}` : ''}: ${skipped.length} stop(s) left out.`;
      void this.store.refreshTrips().catch(() => {});
    } catch (err) {
      result.textContent = `Not published: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
}
