// View 4: the string-line (time-distance) diagram of a route over a time window: time across,
// distance along the route down; scheduled trips as thin lines, actual trajectories over them
// (the passing times at the stops), predictions as dashed continuations. A bounded number of reads
// per redraw, whatever the number of trips:
// - the schedule: GET schedule?date&route_id&from&to&include_shapes=false (one read: the route's
//   trips running in the window, their stop times, their stops);
// - the actual passing times: GET trip-events?start_date&end_date (the day's events, read once
//   page by page, then only the pages from near the end at each redraw: see Passages);
// - the predictions: GET gtfs-rt/trip-updates?format=json (one read; an unchanged feed is a 304
//   the browser answers from its cache).
//
// Distance: along each trip's stops (straight lines between consecutive stops of the GTFS), from
// the terminus of direction 0; a trip of direction 1 is drawn from the other end (total − distance),
// so both directions share one axis and bunching shows as lines drawing together.
import { client, group, ok, type Answer } from './api';
import { chart } from './charts';
import type { Store } from './store';
import { dayStart, gtfsTime } from './servicetime';
import { clock, h, metres, networkTimezone } from './util';

type Schedule = Answer<'/api/v4/groups/{group_id}/schedule'>;
type ScheduleTrip = Schedule['trips'][number];

/** GTFS-Realtime TripUpdates in protobuf's JSON mapping (camelCase), as the document types it. */
type RtFeed = Answer<'/api/v4/groups/{group_id}/gtfs-rt/trip-updates'>;

/** At most this many trips are drawn (the earliest of the window). */
const MAX_TRIPS = 200;
const PAGE = 10_000;

/** The key of a trip instance: trip_id, plus the start time for a frequency-based instance. */
const instanceKey = (tripId: string, startTime: string | null | undefined) => (startTime ? `${tripId}|${startTime}` : tripId);

/**
 * The actual passing times of the day's trips, from GET trip-events (ordered by event time). The
 * first read takes every page of the day; later reads start again from the page before the last
 * one read (its cursor kept), so events that reach the service late (a device's batch sent after
 * a tunnel) are still seen if they are at most a page (10,000 events) older than the newest.
 * A stop's passing time is its latest event (departure after arrival).
 */
export class Passages {
  /** instance key → stop_sequence → epoch ms. */
  byTrip = new Map<string, Map<number, number>>();
  requests = 0;
  private resume: string | null = null;

  constructor(readonly date: string) {}

  async refresh(): Promise<void> {
    let cursor = this.resume;
    let previous = this.resume;
    for (;;) {
      const res = await client.GET('/api/v4/groups/{group_id}/trip-events', { params: { path: group(), query: { start_date: this.date, end_date: this.date, limit: PAGE, ...(cursor ? { cursor } : {}) } } });
      this.requests++;
      const r = await ok(Promise.resolve(res));
      const next = /<[^>]*[?&]cursor=([^&>]+)[^>]*>;\s*rel="next"/.exec(res.response.headers.get('link') ?? '')?.[1] ?? null;
      for (const e of r) {
        if (e.stop_sequence === null || !['stop_passed', 'arrival', 'departure'].includes(e.event)) continue;
        const key = instanceKey(e.trip_id, e.start_time);
        const stops = this.byTrip.get(key) ?? new Map<number, number>();
        const at = Date.parse(e.at);
        if ((stops.get(e.stop_sequence) ?? -Infinity) < at) stops.set(e.stop_sequence, at);
        this.byTrip.set(key, stops);
      }
      if (!next) break;
      previous = cursor;
      cursor = decodeURIComponent(next);
    }
    // Next time: from the page before the last one read (or from the start of the day).
    this.resume = previous;
  }
}

export class StringLine {
  route = '';
  hours = 2;
  lines = { scheduled: 0, actual: 0, predicted: 0 };
  /** Requests of the latest redraw (schedule, trip-events pages, GTFS-RT). */
  requests = 0;
  private mounted = false;
  private box!: HTMLElement;
  private note!: HTMLElement;
  private controls!: HTMLElement;
  private passages: Passages | null = null;

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

  async draw(): Promise<void> {
    const [from, to] = this.window();
    const date = this.store.date;
    const start = dayStart(date, networkTimezone());
    if (this.passages?.date !== date) this.passages = new Passages(date);
    const passages = this.passages;
    const before = passages.requests;
    const [schedule, feed] = await Promise.all([
      ok(client.GET('/api/v4/groups/{group_id}/schedule', { params: { path: group(), query: { date, route_id: this.route, from: gtfsTime((from - start) / 1000), to: gtfsTime((to - start) / 1000), include_shapes: false } } })),
      ok(client.GET('/api/v4/groups/{group_id}/gtfs-rt/trip-updates', { params: { path: group(), query: { format: 'json' } } })) as Promise<RtFeed>, // the JSON form (the protobuf one is the other media type)
      passages.refresh(),
    ]);
    this.requests = 2 + passages.requests - before;
    const base = Date.parse(schedule.day_start);
    const trips = schedule.trips.slice(0, MAX_TRIPS);
    const stops = new Map(schedule.stops.filter((s) => s.lat !== null && s.lon !== null).map((s) => [s.stop_id, [s.lon!, s.lat!] as [number, number]]));
    // Predictions of the route's trips of the date, by instance.
    const rtDate = date.replace(/-/g, '');
    const frequency = new Set(trips.filter((t) => t.frequency).map((t) => t.trip_id));
    const rt = new Map<string, NonNullable<NonNullable<RtFeed['entity']>[number]['tripUpdate']>>();
    for (const e of feed.entity ?? []) {
      const tu = e.tripUpdate;
      if (!tu?.trip.tripId || (tu.trip.startDate && tu.trip.startDate !== rtDate)) continue;
      rt.set(instanceKey(tu.trip.tripId, frequency.has(tu.trip.tripId) ? tu.trip.startTime : null), tu);
    }
    const route = this.store.routes.get(this.route);
    const colour = `#${route?.color || '1f3a93'}`;
    const series: object[] = [];
    this.lines = { scheduled: 0, actual: 0, predicted: 0 };
    let cancelled = 0;
    for (const trip of trips) {
      const key = instanceKey(trip.trip_id, trip.frequency ? trip.start_time : null);
      const st = trip.stop_times;
      const km = distances(st.stop_id.map((stop_id, i) => ({ stop_id, stop_sequence: st.stop_sequence[i]! })), stops, trip.direction_id === 1);
      const sched: [number, number | undefined][] = [];
      st.stop_sequence.forEach((seq, i) => {
        const s = st.departure[i] ?? st.arrival[i];
        if (s !== null && s !== undefined) sched.push([base + s * 1000, km.get(seq)]);
      });
      const tu = rt.get(key);
      const isCancelled = tu?.trip.scheduleRelationship === 'CANCELED';
      const name = `${trip.trip_id} ${trip.start_time.slice(0, 5)}${isCancelled ? ' (cancelled)' : ''}`;
      series.push({ name: `${name} scheduled`, type: 'line', data: sched, symbol: 'none', lineStyle: { width: 1, color: '#9a9a9a', ...(isCancelled ? { type: 'dotted' } : {}) }, z: 1 });
      this.lines.scheduled++;
      if (isCancelled) cancelled++;
      const passed = passages.byTrip.get(key);
      const actual: [number, number | undefined][] = passed ? [...passed].sort((a, b) => a[0] - b[0]).map(([seq, at]) => [at, km.get(seq)]) : [];
      if (actual.length) {
        series.push({ name: `${name} actual`, type: 'line', data: actual, symbol: 'circle', symbolSize: 3, lineStyle: { width: 2.5, color: colour }, itemStyle: { color: colour }, z: 3 });
        this.lines.actual++;
      }
      const pred = (isCancelled ? [] : tu?.stopTimeUpdate ?? [])
        .filter((u) => u.scheduleRelationship !== 'SKIPPED' && u.stopSequence !== undefined && (u.arrival?.time ?? u.departure?.time))
        .map((u) => [(u.arrival?.time ?? u.departure?.time)! * 1000, km.get(u.stopSequence!)] as [number, number | undefined]);
      if (pred.length) {
        series.push({ name: `${name} predicted`, type: 'line', data: [...actual.slice(-1), ...pred], symbol: 'none', lineStyle: { width: 2, type: 'dashed', color: colour }, z: 2 });
        this.lines.predicted++;
      }
    }
    this.root.dataset['scheduled'] = String(this.lines.scheduled);
    this.root.dataset['actual'] = String(this.lines.actual);
    this.root.dataset['predicted'] = String(this.lines.predicted);
    this.root.dataset['requests'] = String(this.requests);
    this.note.textContent = `Route ${route?.short_name ?? this.route}, ${clock(from)}–${clock(to)}: ${this.lines.scheduled} trips scheduled${cancelled ? ` (${cancelled} cancelled)` : ''}, ${this.lines.actual} with actual passing times, ${this.lines.predicted} with predictions ahead` +
      `${schedule.trips.length > trips.length ? ` (the first ${trips.length} of ${schedule.trips.length} drawn)` : ''}.`;
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

export type { ScheduleTrip };
