// View 2: today's trips (GET trips?date=…), every trip of the service day in a table that follows
// the live stream (a new list after trip events and trip updates, and every 20 s). Filters by
// route, team, status, delay and problem; sort by any column; a click opens the trip. Only the rows
// in sight are in the DOM, so a day of 30,000 trips stays quick (bench:console).
import type { Store, TripItem } from './store';
import { clock, delayClass, delayText, h } from './util';

const ROW_HEIGHT = 30;
const STATUSES = ['scheduled', 'in_progress', 'completed', 'partial', 'not_done', 'cancelled'];
type SortKey = 'route' | 'id' | 'departure' | 'status' | 'delay' | 'vehicle';
const COLUMNS: [SortKey, string][] = [['route', 'Route'], ['id', 'Trip'], ['departure', 'Departure'], ['status', 'Status'], ['delay', 'Delay'], ['vehicle', 'Vehicle']];

/** Problems told by the list itself (the trip's own `problems` are in its story). */
export function tripProblem(t: TripItem): string | null {
  if (t.status === 'not_done') return 'missing';
  if (t.status === 'partial') return 'stops missed';
  if (t.delay_seconds !== null && t.delay_seconds > 300) return 'over 5 min late';
  return null;
}

export class TripsTable {
  filter = { route: '', team: '', status: '', minDelay: '', problem: false, text: '' };
  sort: { key: SortKey; desc: boolean } = { key: 'departure', desc: false };
  rows: TripItem[] = [];
  private mounted = false;
  private body!: HTMLTableSectionElement;
  private scroller!: HTMLDivElement;
  private count!: HTMLElement;
  private controls!: HTMLElement;
  private head!: HTMLTableSectionElement;

  constructor(private root: HTMLElement, private store: Store, private openTrip: (id: string) => void) {}

  mount(): void {
    if (this.mounted) return this.update();
    this.mounted = true;
    this.controls = h('form', { class: 'filters', 'aria-label': 'Filters', onsubmit: (e) => e.preventDefault() });
    this.count = h('p', { class: 'count', 'data-testid': 'trip-count', 'aria-live': 'polite' });
    this.head = h('thead');
    this.body = h('tbody');
    this.scroller = h('div', { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': 'Trips of the day' }, h('table', { class: 'trips', 'data-testid': 'trips-table' }, this.head, this.body));
    this.scroller.addEventListener('scroll', () => this.renderRows());
    this.root.replaceChildren(h('h2', {}, "Today's trips"), this.controls, this.count, this.scroller);
    this.store.on('trips', () => this.update());
    this.renderControls();
    this.renderHead();
    this.update();
  }

  private renderControls(): void {
    const select = (name: keyof TripsTable['filter'], label: string, options: [string, string][]) =>
      h('label', {}, `${label} `, h('select', { name, onchange: (e) => this.set(name, (e.target as HTMLSelectElement).value) },
        h('option', { value: '' }, 'all'), ...options.map(([v, text]) => h('option', { value: v, selected: this.filter[name] === v }, text))));
    const routes = [...this.store.routes.values()].map((r) => [r.route_id, `${r.short_name ?? r.route_id} ${r.long_name ?? ''}`.trim()] as [string, string]);
    this.controls.replaceChildren(
      select('route', 'Route', routes),
      select('team', 'Team', this.store.teams.map((t) => [t.team_id, t.name])),
      select('status', 'Status', STATUSES.map((s) => [s, s.replace('_', ' ')])),
      select('minDelay', 'Delay', [['3', 'late over 3 min'], ['5', 'late over 5 min'], ['10', 'late over 10 min'], ['-1', 'early over 1 min']]),
      h('label', {}, h('input', { type: 'checkbox', name: 'problem', checked: this.filter.problem, onchange: (e) => this.set('problem', (e.target as HTMLInputElement).checked) }), ' with a problem'),
      h('label', {}, 'Search ', h('input', { type: 'search', name: 'text', value: this.filter.text, placeholder: 'trip, headsign, vehicle', oninput: (e) => this.set('text', (e.target as HTMLInputElement).value) })),
    );
  }

  private set(name: keyof TripsTable['filter'], value: string | boolean): void {
    (this.filter as Record<string, string | boolean>)[name] = value;
    this.update();
  }

  /** Filter and sort the store's trips, then draw the rows in sight. */
  update(): void {
    if (!this.mounted) return;
    const f = this.filter;
    const text = f.text.trim().toLowerCase();
    const minDelay = f.minDelay === '' ? null : Number(f.minDelay);
    const rows = this.store.trips.filter((t) => {
      if (f.route && t.route_id !== f.route) return false;
      if (f.status && t.status !== f.status) return false;
      if (minDelay !== null) {
        if (t.delay_seconds === null) return false;
        if (minDelay >= 0 ? t.delay_seconds <= minDelay * 60 : t.delay_seconds >= minDelay * 60) return false;
      }
      if (f.problem && !tripProblem(t)) return false;
      if (f.team && !this.store.tripTeams(t).includes(f.team)) return false;
      if (text && !`${t.id} ${t.headsign ?? ''} ${t.vehicle_ids.join(' ')}`.toLowerCase().includes(text)) return false;
      return true;
    });
    const routeName = (t: TripItem) => this.store.routes.get(t.route_id ?? '')?.short_name ?? t.route_id ?? '';
    const key: Record<SortKey, (t: TripItem) => string | number> = {
      route: routeName, id: (t) => t.id, departure: (t) => t.departure_time ?? '', status: (t) => t.status,
      delay: (t) => t.delay_seconds ?? -Infinity, vehicle: (t) => t.vehicle_ids[0] ?? '',
    };
    // Keys computed once per row, then compared as plain values (a day of 30,000 trips).
    const k = key[this.sort.key];
    const dir = this.sort.desc ? -1 : 1;
    const keyed = rows.map((t) => ({ k: k(t), d: t.departure_time ?? '', t }));
    keyed.sort((a, b) => (a.k < b.k ? -dir : a.k > b.k ? dir : a.d < b.d ? -1 : a.d > b.d ? 1 : 0));
    this.rows = keyed.map((x) => x.t);
    this.count.textContent = `${rows.length} of ${this.store.trips.length} trips of ${this.store.date}`;
    this.markSort();
    this.renderRows();
  }

  /** The header once (its buttons stay in place); markSort() shows the order. */
  private renderHead(): void {
    this.head.replaceChildren(h('tr', {}, ...COLUMNS.map(([key, label]) =>
      h('th', { scope: 'col', 'data-col': key },
        h('button', { type: 'button', 'data-sort': key, onclick: () => {
          this.sort = { key, desc: this.sort.key === key ? !this.sort.desc : key === 'delay' };
          this.update();
        } }, label, h('span', { class: 'arrow', 'aria-hidden': 'true' }))))));
  }

  private markSort(): void {
    for (const th of this.head.querySelectorAll<HTMLElement>('th')) {
      const sorted = th.dataset['col'] === this.sort.key;
      th.setAttribute('aria-sort', sorted ? (this.sort.desc ? 'descending' : 'ascending') : 'none');
      th.querySelector('.arrow')!.textContent = sorted ? (this.sort.desc ? ' ▼' : ' ▲') : '';
    }
  }

  private renderRows(): void {
    const height = this.scroller.clientHeight || 600;
    const first = Math.max(0, Math.floor(this.scroller.scrollTop / ROW_HEIGHT) - 5);
    const last = Math.min(this.rows.length, first + Math.ceil(height / ROW_HEIGHT) + 10);
    const spacer = (n: number) => h('tr', { class: 'spacer', 'aria-hidden': 'true', style: `height:${n * ROW_HEIGHT}px` });
    const out: HTMLTableRowElement[] = [];
    if (first > 0) out.push(spacer(first));
    for (let i = first; i < last; i++) out.push(this.row(this.rows[i]!));
    if (last < this.rows.length) out.push(spacer(this.rows.length - last));
    this.body.replaceChildren(...out);
  }

  private row(t: TripItem): HTMLTableRowElement {
    const route = this.store.routes.get(t.route_id ?? '');
    const badge = h('span', { class: 'badge', style: `background:#${route?.color || '555555'};color:#${route?.text_color || 'ffffff'}` }, route?.short_name ?? t.route_id ?? '?');
    const problem = tripProblem(t);
    return h('tr', { 'data-trip': t.id, 'data-status': t.status, class: problem ? 'problem' : '' },
      h('td', {}, badge),
      h('td', {}, h('a', { href: `#trip/${encodeURIComponent(t.id)}/${t.service_date}`, onclick: (e) => {
        e.preventDefault();
        this.openTrip(t.id);
      } }, t.id), h('span', { class: 'headsign' }, ` → ${t.headsign ?? ''}`)),
      h('td', {}, clock(t.departure_time)),
      h('td', { class: `status ${t.status}` }, t.status.replace('_', ' ')),
      h('td', { class: `delay ${delayClass(t.delay_seconds)}`, 'data-delay': t.delay_seconds ?? '' }, delayText(t.delay_seconds), problem ? h('span', { class: 'problem-tag' }, ` · ${problem}`) : null),
      h('td', {}, t.vehicle_ids.join(', ')),
    );
  }
}
