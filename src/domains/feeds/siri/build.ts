/**
 * SIRI 2.1 deliveries (XML, namespace http://www.siri.org.uk/siri) built from the network
 * snapshot (network.ts) with xmlbuilder2. Times are written with the group's UTC offset.
 * References: LineRef = route_id, DatedVehicleJourneyRef = trip_id (`trip_id:start_time` for a
 * frequency instance) framed by its service date (DataFrameRef), StopPointRef = stop_id (a
 * temporary stop: `tmp-<update_id>-<n>`), VehicleRef = vehicle_id, SituationNumber = update_id.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { create } from 'xmlbuilder2';
import { slices } from '../../../platform/slices.js';
import { addDays, isoWithOffset, serviceDayStart } from '../../../platform/time.js';
import type { RouteInfo, StopInfo } from '../../gtfs/service-days.js';
import type { TripUpdateRecord } from '../../updates/schemas.js';
import { alertUpdates } from '../gtfs-rt/feeds.js';
import { assemble, piece, TripPieces, type Piece } from '../fragments.js';
import { monitored, type Call, type FeedTrip, type FeedVehicle, type NetworkNow } from '../network.js';

export const SIRI_NS = 'http://www.siri.org.uk/siri';
export const SIRI_VERSION = '2.1';

type Value = Node | string | number | boolean;
type Node = { [name: string]: Value | Value[] | undefined };

/** Drops undefined members, so optional elements are simply absent. */
function clean(n: Node): Node {
  const out: Node = {};
  for (const [k, v] of Object.entries(n)) {
    if (v === undefined) continue;
    const one = (x: Value): Value => (typeof x === 'object' ? clean(x) : x);
    out[k] = Array.isArray(v) ? v.map(one) : one(v);
  }
  return out;
}

export function siriDocument(body: Node): string {
  const doc = create({ version: '1.0', encoding: 'UTF-8' }).ele(SIRI_NS, 'Siri', { version: SIRI_VERSION });
  doc.ele(clean(body));
  return doc.end({ prettyPrint: false });
}

/**
 * An instant as the group's local time with its UTC offset, to the second (2026-03-02T08:01:00+01:00).
 * A document of a whole network holds hundreds of thousands of them: the exports' formatter, one
 * per zone, looks the offset up once per quarter hour instead of once per time; and each second's
 * text is kept (SECONDS_KEPT at most per zone), as a network's documents write the same few tens of
 * thousands of seconds again and again (the schedule's times, the predictions'): made each time,
 * they were a quarter of a city timetable rebuild's garbage (331 MB in four rebuilds, a sampling
 * allocation profile, bench/feeds-rebuild.ts, 2026-12-03).
 */
export const siriTime = (d: Date, tz: string) => formatterOf(tz)(d);

/** Seconds whose text is kept per zone: two service days and more; past it, the texts kept are let go and kept anew. */
const SECONDS_KEPT = 200_000;

const formatters = new Map<string, (at: Date) => string>();
function formatterOf(tz: string): (at: Date) => string {
  let f = formatters.get(tz);
  if (!f) {
    const format = isoWithOffset(tz);
    const texts = new Map<number, string>();
    f = (at: Date) => {
      // The text is to the second: the instant's second (UTC) tells it whole in a zone.
      const second = Math.floor(at.getTime() / 1000);
      let text = texts.get(second);
      if (text === undefined) {
        if (texts.size >= SECONDS_KEPT) texts.clear();
        text = format(second * 1000);
        texts.set(second, text);
      }
      return text;
    };
    formatters.set(tz, f);
  }
  return f;
}

/**
 * What identifies a document's content (the cache's ETag): the document without the times of its
 * making, the snapshot's `now` written as ResponseTimestamp (and as the frame's RecordedAtTime of an
 * EstimatedTimetable). Read off the built document: a network's document is built once, not twice.
 */
export function contentOf(doc: string, net: Pick<NetworkNow, 'now' | 'timezone'>): string {
  const now = siriTime(net.now, net.timezone);
  return doc.split(`<ResponseTimestamp>${now}</ResponseTimestamp>`).join('').split(`<RecordedAtTime>${now}</RecordedAtTime>`).join('');
}

export const journeyRef = (ft: Pick<FeedTrip, 'trip'>) => (ft.trip.frequency ? `${ft.trip.trip_id}:${ft.trip.start_time}` : ft.trip.trip_id);

function serviceDelivery(net: NetworkNow, producer: string, delivery: Node): Node {
  return { ServiceDelivery: { ResponseTimestamp: siriTime(net.now, net.timezone), ProducerRef: producer, Status: true, MoreData: false, ...delivery } };
}

function estimatedCall(c: Call, order: number, tz: string): Node {
  const t = (d: Date | null) => (d ? siriTime(d, tz) : undefined);
  return {
    StopPointRef: c.stop_id,
    Order: order,
    StopPointName: c.name ?? undefined,
    ExtraCall: c.status === 'added' ? true : undefined,
    Cancellation: c.status === 'skipped' ? true : undefined,
    AimedArrivalTime: t(c.arrival_at),
    ExpectedArrivalTime: c.status === 'skipped' ? undefined : t(c.expected_arrival_at),
    ArrivalStatus: c.status === 'skipped' ? 'cancelled' : undefined,
    AimedDepartureTime: t(c.departure_at),
    ExpectedDepartureTime: c.status === 'skipped' ? undefined : t(c.expected_departure_at),
    DepartureStatus: c.status === 'skipped' ? 'cancelled' : undefined,
  };
}

/** A journey of the EstimatedTimetable as the object xmlText writes (`situations`: the ids of the updates told as situations). */
export function journeyNode(ft: FeedTrip, tz: string, situations: ReadonlySet<string>): Node {
  const refs = ft.overlay.applied.map((u) => u.update_id).filter((id) => situations.has(id));
  return {
    LineRef: ft.trip.route_id,
    DirectionRef: ft.trip.direction_id === null ? undefined : String(ft.trip.direction_id),
    FramedVehicleJourneyRef: { DataFrameRef: ft.service_date, DatedVehicleJourneyRef: journeyRef(ft) },
    Cancellation: ft.overlay.cancelled ? true : undefined,
    DestinationName: ft.trip.headsign ?? undefined,
    SituationRef: refs.length > 0 ? refs.map((r) => ({ SituationSimpleRef: r })) : undefined,
    Monitored: monitored(ft),
    EstimatedCalls: ft.overlay.cancelled ? undefined : { EstimatedCall: ft.calls.map((c, i) => estimatedCall(c, i + 1, tz)) },
    IsCompleteStopSequence: ft.overlay.cancelled ? undefined : true,
  };
}

/**
 * EstimatedTimetable: every journey the snapshot carries (every journey in progress, the next
 * journeys of their blocks within the predictions' horizon, those an update or a delay concerns),
 * all its calls: the expected times of the stops ahead are the predicted ones (the same as
 * GTFS-Realtime's), of the stops passed the observed ones.
 */
export async function estimatedTimetable(net: NetworkNow, producer: string, o: { lineRef?: string | undefined } = {}): Promise<string | null> {
  const out = await estimatedTimetableOutput(net, producer, o);
  return out ? gunzipSync(out.gzip).toString('utf8') : null;
}

/**
 * The EstimatedTimetable as the feed cache keeps it: the document's gzip form (its bytes are not
 * joined: fragments.ts assemble) and size in bytes, what identifies its content (the hash of contentOf(document): of the document around the journeys
 * and of each journey's digest), and the journeys' pieces (fragments.ts); null: no journey. A
 * journey whose trip has the same signature as in `previous` (the pieces of the output's
 * previous build) is not written again: its text, digest and deflated form are reused.
 */
export async function estimatedTimetableOutput(
  net: NetworkNow, producer: string, o: { lineRef?: string | undefined; previous?: TripPieces | undefined } = {},
): Promise<{ gzip: Buffer; size: number; fingerprint: Buffer; pieces: TripPieces } | null> {
  const tz = net.timezone;
  const situations = new Set(alertUpdates(net).map((u) => u.update_id));
  const trips = net.trips.filter((ft) => o.lineRef === undefined || ft.trip.route_id === o.lineRef);
  // The SIRI 2.1 schema wants at least one journey in a delivery: none, no document (the route answers 204).
  if (trips.length === 0) return null;
  // A city's timetable is 150 MB of XML: the document around the journeys is made first, the
  // journeys are then written as text (xmlText, not through xmlbuilder2's object model: 20 % of a
  // server's time and most of its garbage under a city's load), each journey a piece kept for the
  // next build, the event loop given back every SLICE_MS (feed requests are answered meanwhile).
  // The text is the same as xmlbuilder2 writes in one piece.
  const shell = siriDocument(serviceDelivery(net, producer, {
    EstimatedTimetableDelivery: {
      '@version': SIRI_VERSION,
      ResponseTimestamp: siriTime(net.now, tz),
      Status: true,
      EstimatedJourneyVersionFrame: { RecordedAtTime: siriTime(net.now, tz), '!': JOURNEYS_MARK },
    },
  }));
  const mark = `<!--${JOURNEYS_MARK}-->`;
  const at = shell.indexOf(mark);
  const [content0, content1] = contentOf(shell, net).split(mark) as [string, string];
  const hash = createHash('sha256').update(content0);
  const pieces = new TripPieces(o.previous);
  const runs: Piece[][] = [[piece(shell.slice(0, at))]];
  const turn = slices();
  for (const run of journeyRuns(trips)) {
    const parts: Piece[] = [];
    for (const ft of run) {
      const p = pieces.of(ft, () => piece(plainJourneyText(ft, tz) ?? xmlText('EstimatedVehicleJourney', journeyNode(ft, tz, situations))))!;
      parts.push(p);
      hash.update(p.digest);
      const wait = turn();
      if (wait) await wait;
    }
    runs.push(parts);
  }
  runs.push([piece(shell.slice(at + mark.length))]);
  const { gzip, size, deflated } = await assemble(runs);
  pieces.deflated = deflated;
  return { gzip, size, fingerprint: hash.update(content1).digest(), pieces: pieces.done() };
}

/**
 * The journeys of a timetable in the order it tells them, as runs of journeys that change
 * together (fragments.ts assemble: a run's pieces compressed one after the other, each with the one
 * before it as its dictionary, the first of a run alone): the journeys predicted from a vehicle's
 * trip (the trip it runs, then the next trips of its block: its every report moves them), in the
 * order of the trip it runs; then every other journey (scheduled within the horizon with its
 * vehicle not known, told from a delay alone), which change seldom, as one run. Within a run, in
 * the snapshot's order (departures). A vehicle's report then makes its journeys compressed again,
 * not those after them: a city's monitored journeys were compressed again nearly all at each build,
 * a changed journey's successor because it was primed with it (bench/RESULTS.md, 2026-12-03).
 */
export function journeyRuns<T extends Pick<FeedTrip, 'prediction'>>(trips: readonly T[]): T[][] {
  const byVehicleTrip = new Map<string, T[]>();
  const rest: T[] = [];
  for (const ft of trips) {
    const from = ft.prediction?.from_trip_id;
    if (from == null) rest.push(ft);
    else {
      const run = byVehicleTrip.get(from);
      if (run) run.push(ft);
      else byVehicleTrip.set(from, [ft]);
    }
  }
  return rest.length > 0 ? [...byVehicleTrip.values(), rest] : [...byVehicleTrip.values()];
}

const JOURNEYS_MARK = 'journeys';

/** An element with a text as writeXml writes it (escaped; empty: the empty element). */
function element(name: string, text: string): string {
  return textIn(tagsOf(name), text);
}

/** An element of the tags given with a text (element's; a writer of many calls takes the tags once). */
function textIn(tag: Tags, text: string): string {
  const t = escapeText(text);
  return t === '' ? tag.empty : `${tag.open}${t}${tag.close}`;
}

/**
 * The text of a plain journey (no update applies to it: each call is its scheduled stop), the same
 * as xmlText('EstimatedVehicleJourney', …) writes, null for any other (written through the object
 * model). Written straight as text, a call a handful of strings: a city's timetable rebuild writes
 * some 3,500 such journeys of 40 calls, and through the object model (an object per call, its
 * elements' names looked up and their texts escaped one by one) they were 40 % of its garbage (a
 * sampling allocation profile, bench/feeds-rebuild.ts, 2026-12-03).
 */
export function plainJourneyText(ft: FeedTrip, tz: string): string | null {
  if (ft.overlay.applied.length > 0 || ft.overlay.cancelled || ft.calls.length !== ft.stops.length) return null;
  const out = [
    '<EstimatedVehicleJourney>', element('LineRef', ft.trip.route_id),
    ft.trip.direction_id === null ? '' : element('DirectionRef', String(ft.trip.direction_id)),
    '<FramedVehicleJourneyRef>', element('DataFrameRef', ft.service_date), element('DatedVehicleJourneyRef', journeyRef(ft)), '</FramedVehicleJourneyRef>',
    ft.trip.headsign === null ? '' : element('DestinationName', ft.trip.headsign),
    `<Monitored>${monitored(ft)}</Monitored>`,
  ];
  if (ft.calls.length === 0) out.push('<EstimatedCalls/>');
  else {
    out.push('<EstimatedCalls>');
    const ref = tagsOf('StopPointRef');
    const name = tagsOf('StopPointName');
    // The zone's writer of times once per journey, not once per time (siriTime looks it up).
    const time = formatterOf(tz);
    // A call one string (a template, its tags written out), not nine entries of the list: a city's
    // rebuild writes some 130,000 calls, and this takes its journeys' text 29 % less time
    // (2,850 synthetic journeys of 45 calls, the best of 11 rounds: 183 against 130 ms;
    // bench/RESULTS.md, 2026-12-05).
    for (let i = 0; i < ft.calls.length; i++) {
      const c = ft.calls[i]!;
      out.push(
        `<EstimatedCall>${textIn(ref, c.stop_id)}<Order>${i + 1}</Order>${c.name === null ? '' : textIn(name, c.name)}${
          c.arrival_at ? `<AimedArrivalTime>${time(c.arrival_at)}</AimedArrivalTime>` : ''}${
          c.expected_arrival_at ? `<ExpectedArrivalTime>${time(c.expected_arrival_at)}</ExpectedArrivalTime>` : ''}${
          c.departure_at ? `<AimedDepartureTime>${time(c.departure_at)}</AimedDepartureTime>` : ''}${
          c.expected_departure_at ? `<ExpectedDepartureTime>${time(c.expected_departure_at)}</ExpectedDepartureTime>` : ''}</EstimatedCall>`,
      );
    }
    out.push('</EstimatedCalls>');
  }
  out.push('<IsCompleteStopSequence>true</IsCompleteStopSequence></EstimatedVehicleJourney>');
  return out.join('');
}

/**
 * The text of an element as xmlbuilder2 writes it from the same object (the documents are the same
 * whoever writes them). Written as a list of strings joined once: a string concatenated element by
 * element (each `inner += …` and `<a>${inner}</a>` a new rope) made a city timetable rebuild's
 * journeys allocate some 370 MB of string nodes, flattened copies included, for 36 MB of text
 * (bench/RESULTS.md, 2026-11-29 evening).
 */
export function xmlText(name: string, v: Value | Value[]): string {
  const out: string[] = [];
  writeXml(out, name, v);
  return out.join('');
}

/** An element's tags, made once per name: the few names a SIRI document uses, so no tag is made again for each element written. */
const tags = new Map<string, Tags>();
interface Tags {
  open: string;
  close: string;
  empty: string;
}

function tagsOf(name: string): Tags {
  let t = tags.get(name);
  if (!t) {
    // Checked once per name, when its tags are made (not for each element written).
    if (/^[@#!?$]/.test(name)) throw new Error(`xmlText writes elements only, not ${name}`);
    tags.set(name, (t = { open: `<${name}>`, close: `</${name}>`, empty: `<${name}/>` }));
  }
  return t;
}

function writeXml(out: string[], name: string, v: Value | Value[]): void {
  if (Array.isArray(v)) {
    for (const x of v) writeXml(out, name, x);
    return;
  }
  const tag = tagsOf(name);
  if (typeof v === 'object') {
    const at = out.push(tag.open) - 1;
    for (const k in v) {
      const x = v[k];
      if (x !== undefined) writeXml(out, k, x);
    }
    // Nothing inside: the empty element.
    if (out.length === at + 1) out[at] = tag.empty;
    else out.push(tag.close);
    return;
  }
  // A number or a boolean has nothing to escape.
  const t = typeof v === 'string' ? escapeText(v) : String(v);
  if (t === '') out.push(tag.empty);
  else out.push(tag.open, t, tag.close);
}

const ENTITIES: Record<string, string> = { quot: '"', amp: '&', apos: "'", lt: '<', gt: '>' };

/**
 * A text as xmlbuilder2 writes it: the five named entities and the character references it
 * is given decoded first, then every `&` that does not start an entity, `<` and `>` escaped.
 */
function escapeText(s: string): string {
  if (!/[&<>]/.test(s)) return s;
  return s
    .replace(/&(quot|amp|apos|lt|gt);/g, (_m, e: string) => ENTITIES[e]!)
    .replace(/&#(?:x([a-fA-F0-9]+)|([0-9]+));/g, (_m, hex: string | undefined, dec: string | undefined) => String.fromCodePoint(parseInt(hex ?? dec!, hex ? 16 : 10)))
    .replace(/&(?![A-Za-z]+;|#\d+;)/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** VehicleMonitoring: each vehicle of the snapshot (valid until it would become stale). */
export function vehicleMonitoring(net: NetworkNow, producer: string, staleSeconds: number, o: { lineRef?: string | undefined; vehicleRef?: string | undefined } = {}): string {
  const tz = net.timezone;
  const activity = net.vehicles
    .filter((v) => (o.lineRef === undefined || v.route_id === o.lineRef) && (o.vehicleRef === undefined || v.vehicle_id === o.vehicleRef))
    .map((v: FeedVehicle): Node => ({
      RecordedAtTime: siriTime(v.at, tz),
      ValidUntilTime: siriTime(new Date(v.at.getTime() + staleSeconds * 1000), tz),
      VehicleMonitoringRef: v.vehicle_id,
      MonitoredVehicleJourney: {
        LineRef: v.route_id ?? undefined,
        FramedVehicleJourneyRef: v.trip_id ? { DataFrameRef: v.service_date!, DatedVehicleJourneyRef: v.trip_id } : undefined,
        VehicleLocation: { Longitude: v.lon, Latitude: v.lat },
        Bearing: v.bearing ?? undefined,
        VehicleRef: v.vehicle_id,
      },
    }));
  // The vehicles written as text (xmlText: a city's hundreds of them through xmlbuilder2's object
  // model held the event loop for seconds under load), in place of a marker; the same text.
  const shell = siriDocument(serviceDelivery(net, producer, {
    VehicleMonitoringDelivery: { '@version': SIRI_VERSION, ResponseTimestamp: siriTime(net.now, tz), Status: true, '!': ACTIVITY_MARK },
  }));
  return shell.replace(`<!--${ACTIVITY_MARK}-->`, () => xmlText('VehicleActivity', activity));
}

const ACTIVITY_MARK = 'activity';

export interface StopVisit {
  trip: FeedTrip['trip'];
  service_date: string;
  call: Call;
  order: number;
  cancelled: boolean;
  monitored: boolean;
}

/** StopMonitoring: the visits of one stop, departure board order. */
export function stopMonitoring(net: NetworkNow, producer: string, stopId: string, visits: readonly StopVisit[]): string {
  const tz = net.timezone;
  const t = (d: Date | null) => (d ? siriTime(d, tz) : undefined);
  return siriDocument(serviceDelivery(net, producer, {
    StopMonitoringDelivery: {
      '@version': SIRI_VERSION,
      ResponseTimestamp: siriTime(net.now, tz),
      Status: true,
      MonitoringRef: stopId,
      MonitoredStopVisit: visits.map((v): Node => {
        const gone = v.cancelled || v.call.status === 'skipped';
        return {
          RecordedAtTime: siriTime(net.now, tz),
          MonitoringRef: stopId,
          MonitoredVehicleJourney: {
            LineRef: v.trip.route_id,
            DirectionRef: v.trip.direction_id === null ? undefined : String(v.trip.direction_id),
            FramedVehicleJourneyRef: { DataFrameRef: v.service_date, DatedVehicleJourneyRef: journeyRef(v) },
            DestinationName: v.trip.headsign ?? undefined,
            Monitored: v.monitored,
            MonitoredCall: {
              StopPointRef: v.call.stop_id,
              Order: v.order,
              StopPointName: v.call.name ?? undefined,
              AimedArrivalTime: t(v.call.arrival_at),
              ExpectedArrivalTime: gone ? undefined : t(v.call.expected_arrival_at),
              ArrivalStatus: gone ? 'cancelled' : undefined,
              AimedDepartureTime: t(v.call.departure_at),
              ExpectedDepartureTime: gone ? undefined : t(v.call.expected_departure_at),
              DepartureStatus: gone ? 'cancelled' : undefined,
            },
          },
        };
      }),
    },
  }));
}

const SEVERITY = { info: 'slight', warning: 'normal', severe: 'severe' } as const;
/** GTFS-Realtime causes as SIRI 2.1 reasons (element, value). */
const REASON: Record<string, [string, string]> = {
  STRIKE: ['PersonnelReason', 'industrialAction'],
  DEMONSTRATION: ['MiscellaneousReason', 'demonstration'],
  ACCIDENT: ['MiscellaneousReason', 'accident'],
  HOLIDAY: ['MiscellaneousReason', 'holiday'],
  WEATHER: ['EnvironmentReason', 'poorWeather'],
  MAINTENANCE: ['EquipmentReason', 'maintenanceWork'],
  CONSTRUCTION: ['MiscellaneousReason', 'constructionWork'],
  POLICE_ACTIVITY: ['MiscellaneousReason', 'policeActivity'],
  MEDICAL_EMERGENCY: ['MiscellaneousReason', 'illVehicleOccupants'],
  TECHNICAL_PROBLEM: ['EquipmentReason', 'technicalProblem'],
};

function situation(net: NetworkNow, u: TripUpdateRecord, producer: string): Node {
  const tz = net.timezone;
  const m = u.message;
  const lang = m?.language?.slice(0, 2);
  const text = (s: string) => (lang ? { '@xml:lang': lang, '#': s } : s);
  const [reason, reasonValue] = REASON[m?.cause ?? ''] ?? ['UnknownReason', 'unknown'];
  return {
    CreationTime: siriTime(new Date(u.created_at), tz),
    ParticipantRef: producer,
    SituationNumber: u.update_id,
    Source: { SourceType: 'directReport' },
    Progress: 'open',
    ValidityPeriod: { StartTime: siriTime(serviceDayStart(u.start_date, tz), tz), EndTime: siriTime(serviceDayStart(addDays(u.end_date, 1), tz), tz) },
    [reason]: reasonValue,
    Severity: m ? SEVERITY[m.severity] : 'normal',
    ReportType: 'incident',
    Summary: text(m?.header ?? (u.detour?.name ? `Detour: ${u.detour.name}` : 'Detour')),
    Description: m?.description ? text(m.description) : undefined,
    Affects: u.trip_id
      ? { VehicleJourneys: { AffectedVehicleJourney: { DatedVehicleJourneyRef: u.start_time ? `${u.trip_id}:${u.start_time}` : u.trip_id } } }
      : { Networks: { AffectedNetwork: { AffectedLine: { LineRef: u.route_id! } } } },
  };
}

/** SituationExchange: each update in force with a message, and each detour (as GTFS-RT Alerts). */
export function situationExchange(net: NetworkNow, producer: string): string {
  return siriDocument(serviceDelivery(net, producer, {
    SituationExchangeDelivery: {
      '@version': SIRI_VERSION,
      ResponseTimestamp: siriTime(net.now, net.timezone),
      Status: true,
      Situations: { PtSituationElement: alertUpdates(net).map((u) => situation(net, u, producer)) },
    },
  }));
}

export function checkStatus(now: Date, tz: string, ok: boolean, startedAt: Date): string {
  return siriDocument({ CheckStatusResponse: { ResponseTimestamp: siriTime(now, tz), Status: ok, ServiceStartedTime: siriTime(startedAt, tz) } });
}

export function linesDiscovery(now: Date, tz: string, routes: readonly RouteInfo[]): string {
  return siriDocument({
    LinesDelivery: {
      '@version': SIRI_VERSION,
      ResponseTimestamp: siriTime(now, tz),
      Status: true,
      AnnotatedLineRef: routes.map((r) => ({ LineRef: r.route_id, LineName: r.short_name ?? r.long_name ?? r.route_id, Monitored: true })),
    },
  });
}

export function stopPointsDiscovery(now: Date, tz: string, stops: readonly (StopInfo & { lines: string[] })[]): string {
  return siriDocument({
    StopPointsDelivery: {
      '@version': SIRI_VERSION,
      ResponseTimestamp: siriTime(now, tz),
      Status: true,
      AnnotatedStopPointRef: stops.map((s) => ({
        StopPointRef: s.stop_id,
        Monitored: true,
        StopName: s.name ?? s.stop_id,
        Lines: s.lines.length > 0 ? { LineRef: s.lines } : undefined,
        Location: s.lat !== null && s.lon !== null ? { Longitude: s.lon, Latitude: s.lat } : undefined,
      })),
    },
  });
}
