/**
 * bench:network's consumer reads of a GTFS-Realtime feed (consumer-worker.mjs): the header time and
 * the vehicles or trips, scanned off the wire. Plain JavaScript, as the worker that imports it.
 */
import protobuf from 'protobufjs/minimal.js';

const { Reader } = protobuf;

/**
 * The fields of a GTFS-Realtime message the consumer reads (gtfs-realtime.proto): field number and
 * wire type as a tag (2: length-delimited, 0: varint).
 */
const TAG = {
  header: (1 << 3) | 2, // FeedMessage.header
  entity: (2 << 3) | 2, // FeedMessage.entity
  timestamp: (3 << 3) | 0, // FeedHeader.timestamp
  tripUpdate: (3 << 3) | 2, // FeedEntity.trip_update
  vehicle: (4 << 3) | 2, // FeedEntity.vehicle
  trip: (1 << 3) | 2, // TripUpdate.trip
  tripId: (1 << 3) | 2, // TripDescriptor.trip_id
  vehicleDescriptor: (8 << 3) | 2, // VehiclePosition.vehicle
  positionTimestamp: (5 << 3) | 0, // VehiclePosition.timestamp
  vehicleId: (1 << 3) | 2, // VehicleDescriptor.id
};

/** A uint64 as protobufjs reads it (a Long where long.js is installed), as a number. */
const numberOf = (n) => (typeof n === 'number' ? n : n.toNumber());

/**
 * Reads the fields of the message that ends at `end` (a submessage: the length read first, when
 * `end` is undefined), `read` given each tag: it reads the field and returns true, or leaves it,
 * skipped then.
 */
function fields(r, end, read) {
  const until = end ?? r.uint32() + r.pos;
  while (r.pos < until) {
    const tag = r.uint32();
    if (!read(tag)) r.skipType(tag & 7);
  }
}

/**
 * A GTFS-Realtime feed's header time and its vehicles (id, position time) or trips (trip ids), read
 * off the wire with protobufjs's Reader, every other field skipped unread: a city's trip-updates
 * (12 MB, every 5 s) decoded whole into objects with gtfs-realtime-bindings took the consumers'
 * thread 18 % of a core, more than half of it its garbage collector (a profile of the bench,
 * 2026-12-06), on the two cores the service is measured on. The same figures as decoding it whole
 * (test/bench/consumer-scan.test.ts).
 */
export function scanFeed(kind, body) {
  const r = Reader.create(body);
  let header = 0;
  const vehicles = [];
  const trips = [];
  /** The string of the submessage's field `tag` (TripDescriptor.trip_id, VehicleDescriptor.id), '' if absent. */
  const stringIn = (tag) => {
    let text = '';
    fields(r, undefined, (t) => {
      if (t !== tag) return false;
      text = r.string();
      return true;
    });
    return text;
  };
  fields(r, r.len, (tag) => {
    if (tag === TAG.header) {
      fields(r, undefined, (t) => {
        if (t !== TAG.timestamp) return false;
        header = numberOf(r.uint64()) * 1000;
        return true;
      });
      return true;
    }
    if (tag !== TAG.entity) return false;
    fields(r, undefined, (t) => {
      if (kind === 'trip-updates' && t === TAG.tripUpdate) {
        let tripId = '';
        fields(r, undefined, (u) => {
          if (u !== TAG.trip) return false;
          tripId = stringIn(TAG.tripId);
          return true;
        });
        if (tripId) trips.push(tripId);
        return true;
      }
      if (kind === 'vehicle-positions' && t === TAG.vehicle) {
        let id = '';
        let at = 0;
        fields(r, undefined, (v) => {
          if (v === TAG.positionTimestamp) at = numberOf(r.uint64()) * 1000;
          else if (v === TAG.vehicleDescriptor) id = stringIn(TAG.vehicleId);
          else return false;
          return true;
        });
        if (id) vehicles.push([id, at]);
        return true;
      }
      return false;
    });
    return true;
  });
  return kind === 'vehicle-positions' ? { header, vehicles } : { header, trips };
}
