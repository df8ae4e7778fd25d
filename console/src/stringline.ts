// View 4: the string-line (time-distance) diagram of a route over a time window: time across,
// distance along the route down; scheduled trips as thin lines, actual trajectories over them
// (the passing times at the stops), predictions as dashed continuations. From today's trips
// (GET trips?date=…) and each trip of the window (GET trips/{trip_id}).
//
// Distance: along each trip's stops (straight lines between consecutive stops of the GTFS), from
// the terminus of direction 0; a trip of direction 1 is drawn from the other end (total − distance),
// so both directions share one axis and bunching shows as lines drawing together.
import { api } from './api';
import { chart } from './charts';
import type { Store, TripItem } from './store';
import { clock, h, metres } from './util';

interface StopTime { stop_id: string; stop_sequence: number; scheduled_at: string | null; actual_at: string | null; status: string }
interface TripDetail { id: string; direction_id: number | null; delay: StopTime[]; predictions: { stop_sequence: number; arrival_at: string | null; departure_at: string | null }[] }

const MAX_TRIPS = 60;

export class StringLine {
  route = '';
  hours = 2;
  lines = { scheduled: 0, actual: 0, predicted: 0 };
  private mounted = false;
  private box!: HTMLElement;
  private note!: HTMLElement;
  private controls!: HTMLElement;
  private cache = new Map<string, { at: number; trip: TripDetail }>();

  constructor(private root: HTMLElement, private store: Store) {}

  async mount(): Promise<void> {
    if (!this.mounted) {
      this.mounted = true;
      this.route = this.store.network?.routes[0]?.route_id ?? '';
      this.controls = h('form', { class: 'filters', 'aria-label': 'Route and window', onsubmit: (e) => e.preventDefault() });
      this.box = h('div', { class: 'chart tall', 'data-testid': 'stringline-chart' });
      this.note = h('p', { 'data-testid': 'stringline-note', 'aria-live': 'polite' });
      this.root.replaceChildren(h('h2', {}, 'String-line diagram'), this.controls, this.note, this.box);
      this.renderControls();
      setInterval(() => {
        if (!this.root.hidden) void this.draw().catch(() => {});
      }, 30_000);
    }
    await this.draw();
  }

  private renderControls(): void {
    this.controls.replaceChildren(
      h('label', {}, 'Route ', h('select', { name: 'route', onchange: (e) => {
        this.route = (e.target as HTMLSelectElement).value;
        void this.draw();
      } }, ...[...this.store.routes.values()].map((r) => h('option', { value: r.route_id, selected: r.route_id === this.route }, `${r.short_name ?? r.route_id} ${r.long_name ?? ''}`.trim())))),
      h('label', {}, 'Window ', h('select', { name: 'hours', onchange: (e) => {
        this.hours = Number((e.target as HTMLSelectElement).value);
        void this.draw();
      } }, ...[1, 2, 4, 8].map((n) => h('option', { value: n, selected: n === this.hours }, `${n} h before now, 30 min after`)))),
    );
  }

  /** The window: `hours` before the latest report (the network's now), 30 minutes after. */
  window(): [number, number] {
    const now = this.store.latestReport() ?? Date.now();
    return [now - this.hours * 3_600_000, now + 30 * 60_000];
  }

  private async detail(t: TripItem): Promise<TripDetail> {
    const key = `${t.id}|${t.start_time}`;
    const hit = this.cache.get(key);
    // Trips over are read once; the others again after 20 s.
    if (hit && (['completed', 'partial', 'not_done', 'cancelled'].includes(t.status) || Date.now() - hit.at < 20_000)) return hit.trip;
    const trip = await api<TripDetail>(`/trips/${encodeURIComponent(t.id)}?date=${t.service_date}`);
    this.cache.set(key, { at: Date.now(), trip });
    return trip;
  }

  async draw(): Promise<void> {
    const [from, to] = this.window();
    const trips = this.store.trips
      .filter((t) => t.route_id === this.route && t.departure_time && t.arrival_time && Date.parse(t.departure_time) < to && Date.parse(t.arrival_time) > from)
      .slice(0, MAX_TRIPS);
    this.note.textContent = `Loading ${trips.length} trips…`;
    const details: { item: TripItem; trip: TripDetail }[] = [];
    for (let i = 0; i < trips.length; i += 4) {
      const batch = trips.slice(i, i + 4);
      details.push(...(await Promise.all(batch.map(async (item) => ({ item, trip: await this.detail(item) })))));
    }
    const stops = new Map((this.store.network?.stops ?? []).map((s) => [s.stop_id, [s.lon, s.lat] as [number, number]]));
    const route = this.store.routes.get(this.route);
    const colour = `#${route?.color || '1f3a93'}`;
    const series: object[] = [];
    this.lines = { scheduled: 0, actual: 0, predicted: 0 };
    for (const { item, trip } of details) {
      const km = distances(trip.delay, stops, item.direction_id === 1);
      const sched = trip.delay.filter((s) => s.scheduled_at).map((s) => [Date.parse(s.scheduled_at!), km.get(s.stop_sequence)]);
      const actual = trip.delay.filter((s) => s.actual_at).map((s) => [Date.parse(s.actual_at!), km.get(s.stop_sequence)]);
      const pred = trip.predictions.filter((p) => p.arrival_at ?? p.departure_at).map((p) => [Date.parse((p.arrival_at ?? p.departure_at)!), km.get(p.stop_sequence)]);
      const name = `${item.id}${item.start_time ? ` ${item.start_time.slice(0, 5)}` : ''}`;
      series.push({ name: `${name} scheduled`, type: 'line', data: sched, symbol: 'none', lineStyle: { width: 1, color: '#9a9a9a' }, z: 1 });
      this.lines.scheduled++;
      if (actual.length) {
        series.push({ name: `${name} actual`, type: 'line', data: actual, symbol: 'circle', symbolSize: 3, lineStyle: { width: 2.5, color: colour }, itemStyle: { color: colour }, z: 3 });
        this.lines.actual++;
      }
      if (pred.length) {
        series.push({ name: `${name} predicted`, type: 'line', data: [...actual.slice(-1), ...pred], symbol: 'none', lineStyle: { width: 2, type: 'dashed', color: colour }, z: 2 });
        this.lines.predicted++;
      }
    }
    this.root.dataset['scheduled'] = String(this.lines.scheduled);
    this.root.dataset['actual'] = String(this.lines.actual);
    this.root.dataset['predicted'] = String(this.lines.predicted);
    this.note.textContent = `Route ${route?.short_name ?? this.route}, ${clock(from)}–${clock(to)}: ${this.lines.scheduled} trips scheduled, ${this.lines.actual} with actual passing times, ${this.lines.predicted} with predictions ahead.`;
    chart(this.box, `String-line diagram of route ${route?.short_name ?? this.route} from ${clock(from)} to ${clock(to)}: distance along the route down, time across; grey lines scheduled, solid lines actual, dashed lines predicted.`, {
      tooltip: { trigger: 'item', formatter: (p: { seriesName: string; value: [number, number] }) => `${p.seriesName}<br>${clock(p.value[0], true)} · km ${p.value[1]}` },
      grid: { left: 60, right: 20, top: 20, bottom: 40 },
      xAxis: { type: 'time', min: from, max: to, axisLabel: { formatter: (v: number) => clock(v) } },
      yAxis: { type: 'value', inverse: true, name: 'km along the route', nameLocation: 'middle', nameGap: 40, min: 0 },
      series,
    });
  }
}

/** Kilometres of each stop (by stop_sequence) along the trip; reversed for direction 1. */
export function distances(stopsOfTrip: { stop_id: string; stop_sequence: number }[], where: Map<string, [number, number]>, reverse: boolean): Map<number, number> {
  const out = new Map<number, number>();
  let total = 0;
  let prev: [number, number] | undefined;
  const cum: [number, number][] = [];
  for (const s of stopsOfTrip) {
    const p = where.get(s.stop_id);
    if (p && prev) total += metres(prev, p);
    if (p) prev = p;
    cum.push([s.stop_sequence, total]);
  }
  for (const [seq, m] of cum) out.set(seq, Math.round((reverse ? total - m : m) / 10) / 100);
  return out;
}
