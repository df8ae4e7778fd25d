// View 3: a trip's story (GET trips/{trip_id}?date=…): planned against actual at every stop as a
// delay chart, the predictions ahead with their uncertainty, vehicle, driver, device and duty,
// problems and the updates in force; for the roles that may (admin, operator, regulator), the
// actions that change what passengers see: cancel the trip, skip a stop, add a message
// (PUT trip-updates). Other roles see no action; the API refuses them anyway.
import { canAct, client, currentSession, group, newId, ok, type Answer, type Schemas } from './api';
import { chart } from './charts';
import type { Store } from './store';
import { clock, delayClass, delayText, h } from './util';

type TripAnswer = Answer<'/api/v4/groups/{group_id}/trips/{trip_id}'>;
/** A stop of the GTFS trip; the stops an update adds (no stop_sequence) are told in the updates in force. */
type StopRow = Extract<TripAnswer['delay'][number], { stop_sequence: number }>;
type Trip = Omit<TripAnswer, 'delay'> & { delay: StopRow[] };
const scheduledStop = (s: TripAnswer['delay'][number]): s is StopRow => 'stop_sequence' in s && typeof s.stop_sequence === 'number';
type TripUpdateBody = Schemas['TripUpdateBody'];

export class TripStory {
  trip: Trip | null = null;
  /** The trip the view shows (or is loading); a refresh of another one is dropped. */
  private shown: { id: string; date: string } | null = null;
  /** The outcome of the latest action on each trip (kept across redraws). */
  private notices = new Map<string, string>();

  constructor(private root: HTMLElement, private store: Store) {
    store.on('trips', () => {
      // A live refresh of the story shown (today's list changed).
      if (!this.root.hidden && this.shown) void this.show(this.shown.id, this.shown.date, true).catch(() => {});
    });
  }

  async show(tripId: string, date: string, quiet = false): Promise<void> {
    const same = () => this.shown?.id === tripId && this.shown.date === date;
    if (!quiet) {
      this.shown = { id: tripId, date };
      this.root.replaceChildren(h('p', {}, `Loading trip ${tripId}…`));
    } else if (!same()) return;
    const trip = await ok(client.GET('/api/v4/groups/{group_id}/trips/{trip_id}', { params: { path: { ...group(), trip_id: tripId }, query: { date } } }));
    if (!same()) return;
    this.trip = { ...trip, delay: trip.delay.filter(scheduledStop) };
    this.render(this.trip);
  }

  private render(t: Trip): void {
    const duty = [...this.store.vehicles.values()].find((v) => v.trip?.trip_id === t.id);
    const facts = h('dl', { class: 'facts' },
      h('dt', {}, 'Status'), h('dd', { 'data-testid': 'trip-status' }, `${t.status.replace('_', ' ')} (${t.temporality})`),
      h('dt', {}, 'Current delay'), h('dd', { class: `delay ${delayClass(t.current_delay_seconds)}` }, delayText(t.current_delay_seconds)),
      h('dt', {}, 'Vehicle'), h('dd', {}, t.vehicles.map((v) => `bus ${v.fleet_number ?? v.id}`).join(', ') || `planned: ${t.planned?.vehicle_ids.join(', ') || '—'}`),
      h('dt', {}, 'Driver'), h('dd', {}, t.drivers.map((d) => `${d.driver_name ?? d.id}${d.staff_number ? ` (${d.staff_number})` : ''}`).join(', ') || '—'),
      h('dt', {}, 'Device'), h('dd', {}, t.devices.map((d) => d.label ?? d.id).join(', ') || '—'),
      h('dt', {}, 'Duty'), h('dd', {}, duty ? `${duty.duty_id}: ${duty.driver_name ?? duty.driver_id} on bus ${duty.fleet_number ?? duty.vehicle_id}, signed on at ${clock(duty.signed_on_at)}` : 'no duty on this trip now'),
    );
    const problems = Object.keys(t.problems);
    const u = t.updates;
    const updates = [
      u.cancelled ? 'cancelled' : null,
      u.skipped_stops.length ? `${u.skipped_stops.length} stop(s) skipped` : null,
      u.moved_stops.length ? `${u.moved_stops.length} stop(s) moved` : null,
      u.added_stops.length ? `${u.added_stops.length} stop(s) added` : null,
      u.detour ? 'detour' : null,
      ...u.messages.map((m) => `message: ${m.header}`),
    ].filter((x): x is string => !!x);
    const chartBox = h('div', { class: 'chart', 'data-testid': 'delay-chart' });
    this.root.replaceChildren(
      h('p', {}, h('a', { href: '#trips' }, '← Today\'s trips')),
      h('h2', { 'data-testid': 'trip-title' }, t.formatted_name, ` · ${t.id} · ${t.service_date}`),
      facts,
      h('h3', {}, 'Problems'), h('p', { 'data-testid': 'trip-problems' }, problems.length ? problems.join(', ').replace(/_/g, ' ') : 'none'),
      h('h3', {}, 'Updates in force'), h('ul', { 'data-testid': 'trip-updates' }, ...(updates.length ? updates : ['none']).map((x) => h('li', {}, x))),
      canAct(currentSession()) ? this.actions(t) : '',
      h('h3', {}, 'Delay along the trip'), chartBox,
      this.stopTable(t),
    );
    this.drawChart(chartBox, t);
  }

  private drawChart(el: HTMLElement, t: Trip): void {
    const names = t.delay.map((s) => `${s.stop_sequence}. ${s.stop_name ?? s.stop_id}`);
    const pred = new Map(t.predictions.map((p) => [p.stop_sequence, p]));
    const predicted: (number | null)[] = [];
    const low: (number | null)[] = [];
    const band: (number | null)[] = [];
    for (const s of t.delay) {
      const p = pred.get(s.stop_sequence);
      const at = p?.arrival_at ?? p?.departure_at;
      if (!p || !at || !s.scheduled_at) {
        predicted.push(null); low.push(null); band.push(null);
        continue;
      }
      const d = (Date.parse(at) - Date.parse(s.scheduled_at)) / 60_000;
      const u = (p.uncertainty_seconds ?? 0) / 60;
      predicted.push(round(d)); low.push(round(d - u)); band.push(round(2 * u));
    }
    chart(el, `Delay at each stop of trip ${t.id}, in minutes: actual (passed stops) and predicted (stops ahead, with one standard deviation).`, {
      tooltip: { trigger: 'axis' },
      legend: { data: ['actual delay', 'predicted delay', 'uncertainty (±1 σ)'] },
      grid: { left: 50, right: 20, bottom: 90, top: 40 },
      xAxis: { type: 'category', data: names, axisLabel: { rotate: 45, fontSize: 10 } },
      yAxis: { type: 'value', name: 'min', axisLine: { show: true } },
      series: [
        { name: 'uncertainty low', type: 'line', stack: 'u', data: low, lineStyle: { opacity: 0 }, symbol: 'none', tooltip: { show: false } },
        { name: 'uncertainty (±1 σ)', type: 'line', stack: 'u', data: band, lineStyle: { opacity: 0 }, areaStyle: { color: 'rgba(217,72,15,0.18)' }, symbol: 'none' },
        { name: 'actual delay', type: 'line', data: t.delay.map((s) => (s.delay_seconds === null ? null : round(s.delay_seconds / 60))), itemStyle: { color: '#1f3a93' }, markLine: { silent: true, symbol: 'none', data: [{ yAxis: 0 }], lineStyle: { color: '#888' } } },
        { name: 'predicted delay', type: 'line', data: predicted, lineStyle: { type: 'dashed' }, itemStyle: { color: '#d9480f' } },
      ],
    });
  }

  private stopTable(t: Trip): HTMLElement {
    const pred = new Map(t.predictions.map((p) => [p.stop_sequence, p]));
    return h('table', { class: 'stops', 'data-testid': 'trip-stops' },
      h('caption', {}, 'Planned against actual at every stop'),
      h('thead', {}, h('tr', {}, ...['#', 'Stop', 'Planned', 'Actual', 'Delay', 'Status', 'Predicted'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, ...t.delay.map((s) => {
        const p = pred.get(s.stop_sequence);
        const at = p?.arrival_at ?? p?.departure_at;
        return h('tr', { 'data-stop-sequence': s.stop_sequence, 'data-stop-status': s.status },
          h('td', {}, String(s.stop_sequence)), h('td', {}, s.stop_name ?? s.stop_id), h('td', {}, clock(s.scheduled_at)), h('td', {}, clock(s.actual_at, true)),
          h('td', { class: `delay ${delayClass(s.delay_seconds)}` }, delayText(s.delay_seconds)), h('td', {}, s.status),
          h('td', { 'data-testid': at ? 'prediction' : null }, at ? `${clock(at)} ± ${Math.round((p?.uncertainty_seconds ?? 0) / 60)} min` : ''));
      })));
  }

  private actions(t: Trip): HTMLElement {
    const key = `${t.id}/${t.service_date}`;
    const result = h('p', { role: 'status', 'data-testid': 'action-result' }, this.notices.get(key) ?? '');
    const say = (text: string) => {
      this.notices.set(key, text);
      result.textContent = text;
    };
    const put = async (kind: TripUpdateBody['kind'], extra: Pick<TripUpdateBody, 'stop' | 'message'>, what: string) => {
      say(`${what}…`);
      try {
        // The start time only names a frequency-based instance (several items of the list share its id).
        const frequency = this.store.trips.filter((x) => x.id === t.id).length > 1;
        await ok(client.PUT('/api/v4/groups/{group_id}/trip-updates', { params: { path: group() }, body: { update_id: newId('console'), kind, trip_id: t.id, ...(frequency && t.start_time ? { start_time: t.start_time } : {}), start_date: t.service_date, end_date: t.service_date, ...extra } }));
        say(`${what}: done.`);
        await this.show(t.id, t.service_date, true);
        void this.store.refreshTrips().catch(() => {});
      } catch (err) {
        say(`${what}: ${err instanceof Error ? err.message : String(err)}`);
      }
    };
    const pending = t.delay.filter((s) => s.status === 'pending');
    const stopSelect = h('select', { name: 'stop', 'aria-label': 'Stop to skip' }, ...pending.map((s) => h('option', { value: s.stop_sequence }, `${s.stop_sequence}. ${s.stop_name ?? s.stop_id} (${clock(s.scheduled_at)})`)));
    const header = h('input', { name: 'header', required: true, maxlength: 200, placeholder: 'What passengers read first' });
    const description = h('input', { name: 'description', maxlength: 4000, placeholder: 'More detail (optional)' });
    const severity = h('select', { name: 'severity' }, ...['info', 'warning', 'severe'].map((s) => h('option', { value: s, selected: s === 'warning' }, s)));
    return h('section', { class: 'actions', 'aria-label': 'Actions', 'data-testid': 'actions' },
      h('h3', {}, 'Actions (what passengers see)'),
      h('div', { class: 'action' },
        h('button', { type: 'button', class: 'danger', 'data-action': 'cancel', disabled: t.updates.cancelled, onclick: () => {
          if (window.confirm(`Cancel trip ${t.id} on ${t.service_date}? It will be published as cancelled.`)) void put('cancel', {}, 'Cancel the trip');
        } }, t.updates.cancelled ? 'Trip cancelled' : 'Cancel the trip')),
      pending.length
        ? h('form', { class: 'action', onsubmit: (e) => {
          e.preventDefault();
          void put('skip_stop', { stop: { stop_sequence: Number(stopSelect.value) } }, 'Skip the stop');
        } }, h('label', {}, 'Skip ', stopSelect), h('button', { type: 'submit', 'data-action': 'skip' }, 'Skip the stop'))
        : h('p', {}, 'No stop ahead to skip.'),
      h('div', { class: 'action' }, h('a', { href: `#detour/${encodeURIComponent(t.id)}/${t.service_date}`, 'data-action': 'detour' }, 'Draw a detour…')),
      h('form', { class: 'action', onsubmit: (e) => {
        e.preventDefault();
        void put('message', { message: { header: header.value, ...(description.value ? { description: description.value } : {}), severity: severity.value as 'info' | 'warning' | 'severe', cause: 'UNKNOWN_CAUSE' } }, 'Publish the message');
      } }, h('label', {}, 'Message ', header), h('label', {}, 'Detail ', description), h('label', {}, 'Severity ', severity), h('button', { type: 'submit', 'data-action': 'message' }, 'Publish the message')),
      result,
    );
  }
}

const round = (x: number) => Math.round(x * 10) / 10;
