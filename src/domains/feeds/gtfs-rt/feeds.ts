/**
 * The four GTFS-Realtime feeds, built from the network snapshot (network.ts). Every feed is a
 * FULL_DATASET with the header timestamp of the snapshot; entity ids are stable across refreshes:
 * `trip:<YYYYMMDD>:<trip_id>[:<start_time>]`, `vehicle:<vehicle_id>`, `alert:<update_id>`,
 * `tm:<YYYYMMDD>:<trip_id>[:<start_time>]`, `shape:<shape_id>`, `stop:<stop_id>`.
 */
import GtfsRealtimeBindings from 'gtfs-realtime-bindings';
import { Reader, Writer } from 'protobufjs';
import { HTTP_URL_PATTERN } from '../../../platform/http/params.js';
import { slices, SLICE_MS } from '../../../platform/slices.js';
import { serviceDayStart, addDays } from '../../../platform/time.js';
import type { TripUpdateRecord } from '../../updates/schemas.js';
import type { Built } from '../cache.js';
import { isoBasic, type FeedTrip, type FeedVehicle, type NetworkNow } from '../network.js';
import { TripPieces } from '../fragments.js';
import { detourPath, encodePolyline, modificationsOf } from './modifications.js';
import { FeedMessageWithModifications } from './proto.js';

const HTTP_URL = new RegExp(HTTP_URL_PATTERN);

const rt = GtfsRealtimeBindings.transit_realtime;
type IFeedMessage = GtfsRealtimeBindings.transit_realtime.IFeedMessage;
type IFeedEntity = GtfsRealtimeBindings.transit_realtime.IFeedEntity;
type ITripUpdate = GtfsRealtimeBindings.transit_realtime.ITripUpdate;
type IStopTimeUpdate = GtfsRealtimeBindings.transit_realtime.TripUpdate.IStopTimeUpdate;

export const FEEDS = ['trip-updates', 'vehicle-positions', 'alerts', 'trip-modifications'] as const;
export type FeedName = (typeof FEEDS)[number];

const secs = (d: Date) => Math.floor(d.getTime() / 1000);
const text = (s: string, language?: string) => ({ translation: [{ text: s, ...(language ? { language } : {}) }] });

const header = (net: NetworkNow) => ({
  gtfsRealtimeVersion: '2.0',
  incrementality: rt.FeedHeader.Incrementality.FULL_DATASET,
  timestamp: secs(net.now),
});

const tmId = (ft: FeedTrip) => `tm:${ft.key}`;

function tripUpdate(ft: FeedTrip): ITripUpdate {
  const { trip } = ft;
  const descriptor = {
    tripId: trip.trip_id,
    routeId: trip.route_id,
    ...(trip.direction_id !== null ? { directionId: trip.direction_id } : {}),
    startTime: trip.start_time,
    startDate: isoBasic(ft.service_date),
  };
  // When the vehicle's progress was last observed, never after the header (the snapshot's time).
  const timestamp = ft.observed_at ? { timestamp: secs(ft.observed_at) } : {};
  if (ft.overlay.cancelled) return { trip: { ...descriptor, scheduleRelationship: rt.TripDescriptor.ScheduleRelationship.CANCELED }, ...timestamp };
  const modifications = modificationsOf(ft);
  const replaced = new Set(modifications.flatMap((m) => m.replaced));
  const replacements = new Set(modifications.flatMap((m) => m.replacements.map((r) => r.call)));
  const updates: IStopTimeUpdate[] = [];
  for (const c of ft.calls) {
    if (c.status === 'skipped') {
      if (!replaced.has(c.stop_sequence!)) updates.push({ stopSequence: c.stop_sequence!, stopId: c.stop_id, scheduleRelationship: rt.TripUpdate.StopTimeUpdate.ScheduleRelationship.SKIPPED });
    } else if (c.status === 'added') {
      // A stop of the modified trip: no GTFS stop_sequence; its time, with the delay when known.
      const arrival = c.expected_arrival_at ?? c.arrival_at;
      const departure = c.expected_departure_at ?? c.departure_at;
      if (replacements.has(c)) updates.push({ stopId: c.stop_id, ...(arrival ? { arrival: { time: secs(arrival) } } : {}), ...(departure ? { departure: { time: secs(departure) } } : {}) });
    } else if (ft.prediction?.from_trip_id && modifications.length === 0) {
      // Every stop ahead with its predicted times; stops passed are left out (MobilityData: only
      // future stops, consumers need nothing else; the observed delay stays in TripUpdate.delay).
      // A modified trip carries the times of its replacement stops only (above). A trip whose
      // vehicle is not known yet (SIRI's horizon) is not told here: consumers read the schedule.
      if (!c.passed && c.expected_arrival_at && c.expected_departure_at) {
        const uncertainty = c.uncertainty_seconds ?? 0;
        updates.push({ stopSequence: c.stop_sequence!, stopId: c.stop_id, arrival: { time: secs(c.expected_arrival_at), uncertainty }, departure: { time: secs(c.expected_departure_at), uncertainty } });
      }
    } else if (ft.delay && c.stop_sequence === ft.delay.stop_sequence) {
      updates.push({ stopSequence: c.stop_sequence, stopId: c.stop_id, arrival: { delay: ft.delay.delay }, departure: { delay: ft.delay.delay } });
    }
  }
  // A trip whose stops the overlay replaces or adds is published as a modified trip (the
  // descriptor then names the trip only through modified_trip, as the reference requires).
  const tripDescriptor = modifications.length > 0
    ? { modifiedTrip: { modificationsId: tmId(ft), affectedTripId: trip.trip_id, startTime: trip.start_time, startDate: isoBasic(ft.service_date) } }
    : { ...descriptor, scheduleRelationship: rt.TripDescriptor.ScheduleRelationship.SCHEDULED };
  return { trip: tripDescriptor, stopTimeUpdate: updates, ...(ft.delay ? { delay: ft.delay.delay } : {}), ...timestamp };
}

/** The trip's entity in TripUpdates; null for a trip with only a message (the alert carries it). */
function tripUpdateEntity(ft: FeedTrip): IFeedEntity | null {
  const tu = tripUpdate(ft);
  if (!ft.overlay.cancelled && (tu.stopTimeUpdate?.length ?? 0) === 0 && !('modifiedTrip' in (tu.trip ?? {}))) return null;
  return { id: `trip:${ft.key}`, tripUpdate: tu };
}

export function tripUpdatesMessage(net: NetworkNow, trips: readonly FeedTrip[]): IFeedMessage {
  return { header: header(net), entity: trips.flatMap((ft) => tripUpdateEntity(ft) ?? []) };
}

/**
 * TripUpdates as the feed cache keeps it: encoded as FeedMessage.encode writes it, each trip's
 * entity a piece (fragments.ts) reused from `previous` (the pieces of the previous build) when the
 * trip's signature is the same. Gzipped whole by the cache (zlib's pool): its entities are a
 * kilobyte each, too small to deflate apart at a lower cost than the whole (measured).
 *
 * The whole message is written by one protobuf writer, sized after the previous build (entities
 * made, and the kept pieces copied, into its buffer), and the pieces kept for the next build are
 * views of that buffer: no buffer of its own per entity. Every new ArrayBuffer is memory outside
 * V8's heap, and V8 starts a full collection of the heap (a city's feeds thread: 0.9 GB) each time
 * that memory grew by 64 MB: an entity encoded on its own (a writer each, grown by doubling from
 * 128 bytes, copied out, joined to its tag) took six kilobytes of Buffer's pool, and a writer for
 * the whole message grown by doubling twice the body. Every full collection of the city rebuilds
 * measured was started so (bench/RESULTS.md, 2026-11-29 afternoon). The body is a copy of its own
 * (the cache moves it to the service's thread); the pieces keep the writer's buffer until the next
 * build's replaces it, and the build after writes into it again (writtenBuilds): the builds
 * alternate between two buffers rather than allocating one each. `sliceMs`: the slices' length
 * (a test makes builds overlap with 0).
 */
export async function tripUpdatesOutput(net: NetworkNow, previous: TripPieces<Buffer> | undefined, sliceMs = SLICE_MS): Promise<{ body: Buffer; pieces: TripPieces<Buffer> }> {
  const w = Writer.create();
  const before = previous ? writtenBuilds.get(previous) : undefined;
  if (before) {
    // Sized after the previous build (a quarter more, a tenth at least when reused): not grown by
    // doubling, an ArrayBuffer at each step. Written into the buffer of the build before it when
    // nothing reads that one any more.
    const spare = before.before && before.before.readers === 0 && before.before.buffer.length >= Math.ceil(before.size * 1.1) ? before.before.buffer : undefined;
    // Taken (a second build from the same pieces writes into a buffer of its own), and the build
    // before let go.
    before.before = undefined;
    w.buf = spare ?? Buffer.allocUnsafeSlow(Math.ceil(before.size * 1.25));
    before.readers++;
  }
  try {
    rt.FeedMessage.encode({ header: header(net), entity: [] }, w);
    const pieces = new TripPieces<Buffer>(previous);
    const spans: [piece: Buffer, start: number, end: number][] = [];
    const turn = slices(sliceMs);
    for (const ft of net.trips) {
      const start = w.pos;
      let made = false;
      const p = pieces.of(ft, () => {
        const e = tripUpdateEntity(ft);
        if (!e) return null;
        writeEntity(w, e);
        made = true;
        // A view of the bytes as written (a buffer the writer outgrows keeps them), moved below.
        return toBuffer(w.buf.subarray(start, w.pos));
      });
      if (p) {
        if (!made) w.raw(p);
        spans.push([p, start, w.pos]);
      }
      const wait = turn();
      if (wait) await wait;
    }
    // A copy, moved whole to the service's thread; the writer's buffer stays with the pieces.
    const body = toBuffer(w.finish());
    const written = toBuffer(w.buf);
    const moved = new Map(spans.map(([p, start, end]) => [p, written.subarray(start, end)]));
    pieces.done((p) => moved.get(p) ?? p);
    // No piece points into the previous build's buffer any more: the next build may write into it
    // once no build still reads the previous pieces (two builds from the same pieces may overlap).
    writtenBuilds.set(pieces, { size: body.length, buffer: written, readers: 0, ...(before ? { before } : {}) });
    return { body, pieces };
  } finally {
    if (before) before.readers--;
  }
}

/**
 * What each trip-updates build left, by the pieces it kept: its body's size (the next build's
 * writer is sized after it), the buffer its pieces are views of, the builds under way that copy
 * from those pieces (`readers`), and the build it was made from (`before`), whose buffer no piece
 * points into any more: the next build writes into that buffer once no build reads the pieces
 * that did. So a city's builds alternate between two buffers of 13 MB instead of allocating one
 * each time: memory outside V8's heap, whose growth by 64 MB starts a full collection of the feeds
 * thread's gigabyte heap (docs/feeds.md).
 */
interface WrittenBuild {
  size: number;
  buffer: Buffer;
  readers: number;
  before?: WrittenBuild;
}
const writtenBuilds = new WeakMap<TripPieces<Buffer>, WrittenBuild>();

/** An entity as FeedMessage.encode writes it after the header: field 2 (tag 0x12), length-delimited. */
function writeEntity(w: Writer, e: IFeedEntity) {
  rt.FeedEntity.encode(e, w.uint32(0x12).fork()).ldelim();
}

export function vehiclePositionsMessage(net: NetworkNow, vehicles: readonly FeedVehicle[]): IFeedMessage {
  return {
    header: header(net),
    entity: vehicles.map((v) => ({
      id: `vehicle:${v.vehicle_id}`,
      vehicle: {
        ...(v.trip_id ? { trip: { tripId: v.trip_id, routeId: v.route_id!, startDate: isoBasic(v.service_date!), ...(v.start_time ? { startTime: v.start_time } : {}) } } : {}),
        vehicle: { id: v.vehicle_id, ...(v.fleet_number ? { label: v.fleet_number } : {}) },
        position: { latitude: v.lat, longitude: v.lon, ...(v.bearing !== null ? { bearing: v.bearing } : {}), ...(v.speed_kmh !== null ? { speed: v.speed_kmh / 3.6 } : {}) },
        timestamp: secs(v.at),
      },
    })),
  };
}

const DEFAULT_EFFECT: Record<TripUpdateRecord['kind'], keyof typeof rt.Alert.Effect> = {
  cancel: 'NO_SERVICE', detour: 'DETOUR', skip_stop: 'STOP_MOVED', move_stop: 'STOP_MOVED', add_stop: 'ADDITIONAL_SERVICE', message: 'OTHER_EFFECT',
};
const SEVERITY = { info: 'INFO', warning: 'WARNING', severe: 'SEVERE' } as const;

/** The updates that passengers read as alerts: those with a message, and every detour. */
export function alertUpdates(net: NetworkNow): TripUpdateRecord[] {
  const seen = new Map<string, TripUpdateRecord>();
  for (const { update } of net.updates) if ((update.message || update.kind === 'detour') && !seen.has(update.update_id)) seen.set(update.update_id, update);
  return [...seen.values()];
}

export function alertsMessage(net: NetworkNow): IFeedMessage {
  const routeOf = new Map(net.trips.map((t) => [t.trip.trip_id, t.trip.route_id]));
  return {
    header: header(net),
    entity: alertUpdates(net).map((u) => {
      const m = u.message;
      const route = u.route_id ?? routeOf.get(u.trip_id!);
      return {
        id: `alert:${u.update_id}`,
        alert: {
          // In force from the start of its first service day to the start of the day after its last.
          activePeriod: [{ start: secs(serviceDayStart(u.start_date, net.timezone)), end: secs(serviceDayStart(addDays(u.end_date, 1), net.timezone)) }],
          informedEntity: [u.trip_id ? { trip: { tripId: u.trip_id, ...(u.start_time ? { startTime: u.start_time } : {}) }, ...(route ? { routeId: route } : {}) } : { routeId: u.route_id! }],
          cause: rt.Alert.Cause[m?.cause ?? 'UNKNOWN_CAUSE'],
          effect: rt.Alert.Effect[m?.effect ?? DEFAULT_EFFECT[u.kind]],
          headerText: text(m?.header ?? (u.detour?.name ? `Detour: ${u.detour.name}` : 'Detour'), m?.language),
          ...(m?.description ? { descriptionText: text(m.description, m.language) } : {}),
          // Records stored before urls were limited to http(s) may hold another scheme: left out.
          ...(m?.url && HTTP_URL.test(m.url) ? { url: text(m.url, m.language) } : {}),
          severityLevel: rt.Alert.SeverityLevel[m ? SEVERITY[m.severity] : 'WARNING'],
        },
      };
    }),
  };
}

/** TripModifications, with the Shape of each detour and the Stop of each temporary stop. */
export function tripModificationsObject(net: NetworkNow): Record<string, unknown> {
  const alerts = new Set(alertUpdates(net).map((u) => u.update_id));
  const lastModified = new Map(net.updates.map(({ update }) => [update.update_id, secs(new Date(update.ended_at ?? update.created_at))]));
  const entity: Record<string, unknown>[] = [];
  const stops = new Map<string, Record<string, unknown>>();
  for (const ft of net.trips) {
    if (ft.overlay.cancelled) continue;
    const mods = modificationsOf(ft);
    if (mods.length === 0) continue;
    let shapeId: string | undefined;
    const detourMod = mods.find((m) => ft.overlay.detour && m.update_ids.includes(ft.overlay.detour.update_id));
    if (detourMod) {
      shapeId = `detour:${ft.overlay.detour!.update_id}:${ft.key}`;
      entity.push({ id: `shape:${shapeId}`, shape: { shapeId, encodedPolyline: encodePolyline(detourPath(ft, detourMod)) } });
    }
    for (const m of mods) for (const { call } of m.replacements) {
      if (call.temporary && !stops.has(call.stop_id)) {
        stops.set(call.stop_id, { id: `stop:${call.stop_id}`, stop: { stopId: call.stop_id, ...(call.name ? { stopName: text(call.name) } : {}), stopLat: call.lat, stopLon: call.lon } });
      }
    }
    entity.push({
      id: tmId(ft),
      tripModifications: {
        selectedTrips: [{ tripIds: [ft.trip.trip_id], ...(shapeId ? { shapeId } : {}) }],
        startTimes: ft.trip.frequency ? [ft.trip.start_time] : [],
        serviceDates: [isoBasic(ft.service_date)],
        modifications: mods.map((m) => {
          const alert = m.update_ids.find((u) => alerts.has(u));
          return {
            startStopSelector: { stopSequence: m.start_sequence },
            ...(m.end_sequence !== null ? { endStopSelector: { stopSequence: m.end_sequence } } : {}),
            replacementStops: m.replacements.map((r) => ({ stopId: r.call.stop_id, travelTimeToStop: r.travel_time_to_stop })),
            ...(alert ? { serviceAlertId: `alert:${alert}` } : {}),
            lastModifiedTime: Math.max(0, ...m.update_ids.map((u) => lastModified.get(u) ?? 0)),
          };
        }),
      },
    });
  }
  entity.push(...stops.values());
  return { header: { ...header(net), incrementality: 'FULL_DATASET' }, entity };
}

/**
 * What follows the header in an encoded FeedMessage: the header is field 1, written first
 * (tag 0x0A, a varint length, the header; read with protobufjs's Reader), so the rest is the
 * entities. It fingerprints the content without its timestamp, at no second encoding.
 */
function afterHeader(body: Uint8Array): Buffer {
  const r = Reader.create(body);
  // Field 1, length-delimited: (1 << 3) | 2.
  if (r.uint32() !== 0x0a) throw new Error('a FeedMessage starts with its header');
  r.skipType(2);
  return Buffer.from(body.buffer, body.byteOffset + r.pos, body.byteLength - r.pos);
}

/**
 * The feed as protobuf, fingerprinted without its header timestamp (the cache's ETag).
 * `state`: what the previous build of the feed kept (trip-updates: its trips' pieces).
 */
export async function buildFeed(net: NetworkNow, feed: FeedName, state?: unknown): Promise<Built & { body: Buffer }> {
  const contentType = 'application/x-protobuf';
  if (feed === 'trip-updates') {
    const out = await tripUpdatesOutput(net, state instanceof TripPieces ? (state as TripPieces<Buffer>) : undefined);
    return { contentType, body: out.body, fingerprint: afterHeader(out.body), state: out.pieces };
  }
  const body = feed === 'trip-modifications'
    ? toBuffer(FeedMessageWithModifications.encode(FeedMessageWithModifications.fromObject(tripModificationsObject(net))).finish())
    : await encodeFeedMessage(feed === 'vehicle-positions' ? vehiclePositionsMessage(net, net.vehicles) : alertsMessage(net));
  return { contentType, body, fingerprint: afterHeader(body) };
}

const toBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * A FeedMessage encoded as FeedMessage.encode writes it (the header, field 1, then each entity,
 * field 2: tag 0x12 and the entity length-delimited), in slices of SLICE_MS: a city's
 * trip-updates is megabytes, and the feed requests and device batches waiting are answered
 * between two slices. One writer for the whole message (see tripUpdatesOutput: a writer per
 * entity cost Buffer's pool an ArrayBuffer every entity or so).
 */
export async function encodeFeedMessage(msg: IFeedMessage, sliceMs = SLICE_MS): Promise<Buffer> {
  const w = rt.FeedMessage.encode({ header: msg.header, entity: [] });
  const turn = slices(sliceMs);
  for (const e of msg.entity ?? []) {
    writeEntity(w, e);
    const wait = turn();
    if (wait) await wait;
  }
  return toBuffer(w.finish());
}

/** The same content as JSON (protobuf's JSON mapping: lowerCamelCase names, enums by name). */
export function feedAsJson(feed: FeedName, body: Buffer): Buffer {
  const type = feed === 'trip-modifications' ? FeedMessageWithModifications : rt.FeedMessage;
  const obj = (type as typeof rt.FeedMessage).toObject((type as typeof rt.FeedMessage).decode(body), { enums: String, longs: Number });
  return Buffer.from(JSON.stringify(obj));
}
