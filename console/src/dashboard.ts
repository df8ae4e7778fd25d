// View 5: punctuality and predictions over a chosen period (GET stats/trip-tracking and
// stats/predictions), by day and route, as charts; each chart's numbers downloadable as CSV.
import { client, group, ok, type Answer } from './api';
import { chart } from './charts';
import type { Store } from './store';
import { csv, downloadLink, h } from './util';

type Row = Record<string, number | string | null>;
// As the document gives them; the panels read the fields they chart by name.
type TrackingStats = Answer<'/api/v4/groups/{group_id}/stats/trip-tracking'>;
type PredictionStats = Answer<'/api/v4/groups/{group_id}/stats/predictions'>;

const addDays = (iso: string, n: number) => new Date(Date.parse(`${iso}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

export class Dashboard {
  start = '';
  end = '';
  tracking: TrackingStats | null = null;
  predictions: PredictionStats | null = null;
  private mounted = false;
  private body!: HTMLElement;

  constructor(private root: HTMLElement, private store: Store) {}

  async mount(): Promise<void> {
    if (!this.mounted) {
      this.mounted = true;
      this.end = this.store.date;
      this.start = addDays(this.end, -6);
      const start = h('input', { type: 'date', name: 'start', value: this.start, required: true });
      const end = h('input', { type: 'date', name: 'end', value: this.end, required: true });
      const form = h('form', { class: 'filters', 'aria-label': 'Period', onsubmit: (e) => {
        e.preventDefault();
        this.start = start.value;
        this.end = end.value;
        void this.load();
      } }, h('label', {}, 'From ', start), h('label', {}, 'to ', end), h('button', { type: 'submit' }, 'Show'));
      this.body = h('div', { class: 'dashboard' });
      this.root.replaceChildren(h('h2', {}, 'Punctuality and predictions'), form, this.body);
    }
    await this.load();
  }

  async load(): Promise<void> {
    const params = { path: group(), query: { start_date: this.start, end_date: this.end } };
    this.body.replaceChildren(h('p', {}, 'Loading…'));
    try {
      [this.tracking, this.predictions] = await Promise.all([
        ok(client.GET('/api/v4/groups/{group_id}/stats/trip-tracking', { params })),
        ok(client.GET('/api/v4/groups/{group_id}/stats/predictions', { params })),
      ]);
    } catch (err) {
      this.body.replaceChildren(h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
      return;
    }
    this.render();
  }

  private panel(id: string, title: string, rows: (string | number | null)[][], draw: (el: HTMLElement) => void): HTMLElement {
    const el = h('div', { class: 'chart', 'data-testid': `chart-${id}` });
    const panel = h('section', { class: 'panel', 'aria-label': title }, h('h3', {}, title), el, downloadLink(`Download CSV (${title})`, `${id}_${this.start}_${this.end}.csv`, csv(rows)));
    queueMicrotask(() => draw(el));
    return panel;
  }

  private render(): void {
    const t = this.tracking!;
    const p = this.predictions!;
    const tot = t.total;
    const days = t.by_day.map((d) => String(d['service_date']));
    const routes = t.by_route.map((r) => String(r['route_id']));
    const horizon = p.total.by_horizon;
    const band = (b: Row) => `${b['from_minutes']}–${b['to_minutes']} min`;
    const summary = h('p', { class: 'summary', 'data-testid': 'dashboard-summary' },
      `${this.start} to ${this.end}: ${tot['trips']} trips, ${tot['stop_passages']} stop passages, punctuality ${tot['punctuality_percent'] ?? '—'} %, ` +
      `${tot['tk']} km planned, ${tot['vk']} km driven; ${p.total['predictions']} predictions scored, accuracy ${p.total['accuracy_percent'] ?? '—'} %.`);
    const punctuality = [['service_date', 'stop_passages', 'early', 'on_time', 'late', 'punctuality_percent'], ...t.by_day.map((d) => [d['service_date'], d['stop_passages'], d['early'], d['on_time'], d['late'], d['punctuality_percent']])] as (string | number | null)[][];
    const delays = [['route_id', 'stop_passages', 'average_delay_seconds', 'p50_delay_seconds', 'p90_delay_seconds', 'p95_delay_seconds', 'max_delay_seconds'], ...t.by_route.map((r) => [r['route_id'], r['stop_passages'], r['average_delay_seconds'], r['p50_delay_seconds'], r['p90_delay_seconds'], r['p95_delay_seconds'], r['max_delay_seconds']])] as (string | number | null)[][];
    const km = [['service_date', 'tk', 'vk', 'recorded_commercial_km', 'percent_km'], ...t.by_day.map((d) => [d['service_date'], d['tk'], d['vk'], d['recorded_commercial_km'], d['percent_km']])] as (string | number | null)[][];
    const acc = [['from_minutes', 'to_minutes', 'predictions', 'accuracy_percent', 'early_percent', 'late_percent', 'median_error_seconds'], ...horizon.map((b) => [b['from_minutes'], b['to_minutes'], b['predictions'], b['accuracy_percent'], b['early_percent'], b['late_percent'], b['median_error_seconds']])] as (string | number | null)[][];
    const share = (d: Row, k: string) => (Number(d['stop_passages']) ? Math.round((Number(d[k]) / Number(d['stop_passages'])) * 1000) / 10 : null);
    this.body.replaceChildren(
      summary,
      h('div', { class: 'panels' },
        this.panel('punctuality', 'Punctuality by day (share of stop passages, %)', punctuality, (el) => chart(el, 'Share of stop passages early, on time and late, by day, in percent.', {
          tooltip: { trigger: 'axis' }, legend: {}, grid: { left: 45, right: 10, bottom: 30, top: 35 },
          xAxis: { type: 'category', data: days }, yAxis: { type: 'value', max: 100, name: '%' },
          series: [['early', '#1f6fd1'], ['on_time', '#1a8a3a'], ['late', '#d9480f']].map(([k, c]) => ({ name: k!.replace('_', ' '), type: 'bar', stack: 's', data: t.by_day.map((d) => share(d, k!)), itemStyle: { color: c } })),
        })),
        this.panel('delays', 'Delay distribution by route (seconds)', delays, (el) => chart(el, 'Delay percentiles p50, p90 and p95 by route, in seconds.', {
          tooltip: { trigger: 'axis' }, legend: {}, grid: { left: 50, right: 10, bottom: 30, top: 35 },
          xAxis: { type: 'category', data: routes }, yAxis: { type: 'value', name: 's' },
          series: (['p50', 'p90', 'p95'] as const).map((k) => ({ name: k, type: 'bar', data: t.by_route.map((r) => r[`${k}_delay_seconds`]) })),
        })),
        this.panel('km', 'Kilometres driven against planned, by day', km, (el) => chart(el, 'Planned kilometres (tk), driven (vk) and recorded commercial kilometres, by day.', {
          tooltip: { trigger: 'axis' }, legend: {}, grid: { left: 55, right: 10, bottom: 30, top: 35 },
          xAxis: { type: 'category', data: days }, yAxis: { type: 'value', name: 'km' },
          series: ([['tk', 'planned (tk)'], ['vk', 'driven (vk)'], ['recorded_commercial_km', 'commercial']] as const).map(([k, n]) => ({ name: n, type: 'bar', data: t.by_day.map((d) => d[k]) })),
        })),
        this.panel('prediction-accuracy', 'Prediction accuracy by horizon (%)', acc, (el) => chart(el, 'Share of predictions accurate, early and late, by horizon band before the arrival, in percent.', {
          tooltip: { trigger: 'axis' }, legend: {}, grid: { left: 45, right: 10, bottom: 30, top: 35 },
          xAxis: { type: 'category', data: horizon.map(band), name: 'horizon' }, yAxis: { type: 'value', max: 100, name: '%' },
          series: ([['accuracy_percent', 'accurate', '#1a8a3a'], ['early_percent', 'early', '#1f6fd1'], ['late_percent', 'late', '#d9480f']] as const).map(([k, n, c]) => ({ name: n, type: 'bar', stack: 'p', data: horizon.map((b) => b[k]), itemStyle: { color: c } })),
        })),
      ),
    );
  }
}
