/**
 * The device API (our design; DESIGN 5): what a driver application reports. Every item has a
 * client-generated UUID `id` (retries are safe) and its own time `at`; items of one batch may be
 * of any type, late, and out of order.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { component, ref } from '../../platform/http/components.js';
import { Nullable, StringEnum } from '../../platform/http/params.js';

const Id = Type.String({ format: 'uuid', description: 'Client-generated UUID of the item; the same id sent again is acknowledged as a duplicate and not stored twice.' });
const At = Type.String({ format: 'date-time', description: 'When it happened on the device, ISO 8601 with offset.' });
const TripId = Type.String({ minLength: 1, maxLength: 255 });
const ServiceDate = Type.String({ format: 'date', description: 'The service date of the trip (YYYY-MM-DD).' });
const StartTime = Type.String({ pattern: '^[0-9]{1,2}:[0-5][0-9]:[0-5][0-9]$', description: 'For a frequency-based trip, the scheduled start of this instance (HH:MM:SS, may pass 24:00:00).' });
const Lat = Type.Number({ minimum: -90, maximum: 90 });
const Lon = Type.Number({ minimum: -180, maximum: 180 });
const Km = Type.Number({ minimum: 0, maximum: 10_000_000 });

/** An item type: the component `<Type>Item` (SignOnItem…), closed, discriminated by `type`. */
const item = <const K extends string, P extends Record<string, TSchema>>(type: K, description: string, properties: P) =>
  component(
    `${type.split('_').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}Item`,
    Type.Object({ id: Id, type: Type.Literal(type, { description: `The item type: \`${type}\`.` }), at: At, ...properties }, { additionalProperties: false, description, title: type }),
  );

export const SignOnItem = item('sign_on', 'Opens a duty: this driver drives this vehicle with this device. A sign-on while a duty is open on the device closes that duty (end_reason next_sign_on).', {
  driver_id: Type.Optional(Type.String({ pattern: '^[0-9a-f]{24}$', description: 'The driver; or give driver_code.' })),
  driver_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The internal code the driver typed on the device.' })),
  vehicle_id: Type.String({ minLength: 1, maxLength: 128 }),
  odometer_km: Type.Optional(Km),
  info: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Free sign-on information (app version, checks done…).' })),
});

export const SignOffItem = item('sign_off', 'Closes the duty open on the device at that time.', {
  odometer_km: Type.Optional(Km),
  non_commercial_km: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000, description: 'Kilometres driven outside commercial service during the duty.' })),
  info: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Free sign-off information (remarks, incidents…).' })),
});

const TripRef = {
  trip_id: TripId,
  service_date: ServiceDate,
  start_time: Type.Optional(StartTime),
};

export const TripStartItem = item('trip_start', 'The duty starts operating a trip: the driver took it, possibly while laying over at its first stop. Not a departure: the first stop is departed at a `departure` trip_event of that stop, else when the positions show the vehicle leaving it (positions reported while laying over do not start the trip; docs/tracking.md).', { ...TripRef, block_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) });
export const TripEndItem = item('trip_end', 'The duty ends a trip.', { ...TripRef });

export const TRIP_EVENT_KINDS = ['stop_passed', 'departure', 'arrival', 'state_change'] as const;
export const TripEventItem = item('trip_event', 'A fact during a trip: a stop passed, a departure, an arrival, a state change. What a driver application sends: `departure` when leaving the first stop (after any layover), `arrival` and `departure` at an intermediate stop (or one `stop_passed` when it cannot tell them apart), `arrival` at the last stop; each names its call by stop_sequence (or stop_id). An event gives the stop\'s time and wins over the positions.', {
  ...TripRef,
  event: StringEnum(TRIP_EVENT_KINDS),
  stop_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  stop_sequence: Type.Optional(Type.Integer({ minimum: 0 })),
  lat: Type.Optional(Lat),
  lon: Type.Optional(Lon),
  gps_valid: Type.Boolean({ description: 'Whether the GPS fix was valid when the event was recorded.' }),
  odometer_km: Type.Optional(Km),
  state: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'For state_change: the new state (e.g. in_service, out_of_service, detour).' })),
});

export const PositionItem = item('position', 'A GPS position of the device.', {
  lat: Lat,
  lon: Lon,
  gps_valid: Type.Boolean(),
  speed_kmh: Type.Optional(Type.Number({ minimum: 0, maximum: 400 })),
  bearing: Type.Optional(Type.Number({ minimum: 0, maximum: 360 })),
  accuracy_m: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000 })),
  odometer_km: Type.Optional(Km),
  trip_id: Type.Optional(TripId),
  service_date: Type.Optional(ServiceDate),
  start_time: Type.Optional(StartTime),
});

export const PASSENGER_CATEGORY_PATTERN = '^[a-z][a-z_]{0,31}$';
export const PassengerCountItem = item('passenger_count', 'Boardings and alightings counted at one door at a stop, per passenger category.', {
  ...TripRef,
  stop_id: Type.String({ minLength: 1, maxLength: 255 }),
  stop_sequence: Type.Optional(Type.Integer({ minimum: 0 })),
  door: Type.Integer({ minimum: 1, maximum: 99, description: 'Door number, 1 = front door.' }),
  counts: Type.Array(
    Type.Object(
      {
        category: Type.String({ pattern: PASSENGER_CATEGORY_PATTERN, description: 'Passenger category, e.g. adults (the default of the PCS-CNT export), children, wheelchairs, bikes.' }),
        boardings: Type.Integer({ minimum: 0, maximum: 1000 }),
        alightings: Type.Integer({ minimum: 0, maximum: 1000 }),
      },
      { additionalProperties: false },
    ),
    { minItems: 1, maxItems: 20 },
  ),
});

/**
 * The bounds of a device's state (audit #15 item 9a: unknown fields were merged forever): an item
 * names at most DEVICE_STATE_MAX_FIELDS fields of at most DEVICE_STATE_MAX_NAME characters, text
 * values hold at most DEVICE_STATE_MAX_TEXT characters, and the state they are merged into keeps at
 * most DEVICE_STATE_MAX_FIELDS fields and DEVICE_STATE_MAX_BYTES bytes of JSON (history.ts).
 */
export const DEVICE_STATE_MAX_FIELDS = 64;
export const DEVICE_STATE_MAX_NAME = 64;
export const DEVICE_STATE_MAX_TEXT = 1000;
export const DEVICE_STATE_MAX_BYTES = 16 * 1024;

export const DeviceStateItem = item('device_state', 'A change of the device state, merged into its history: only the fields given change, and a field set to null is removed. ' +
  `Bounds: at most ${DEVICE_STATE_MAX_FIELDS} fields per item, names of 1 to ${DEVICE_STATE_MAX_NAME} characters, text values of at most ${DEVICE_STATE_MAX_TEXT} characters; ` +
  `the device's state after the merge holds at most ${DEVICE_STATE_MAX_FIELDS} fields and ${DEVICE_STATE_MAX_BYTES} bytes of JSON (remove fields with null to make room). ` +
  'An item over a bound is rejected alone (in `rejected`, naming the bound); the other items of the batch are stored.', {
  state: Type.Object(
    {
      app_version: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
      battery_pct: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 100 }))),
      charging: Type.Optional(Nullable(Type.Boolean())),
      network: Type.Optional(Nullable(Type.String({ maxLength: 32, description: 'e.g. offline, 2g, 3g, 4g, 5g, wifi' }))),
      gps_enabled: Type.Optional(Nullable(Type.Boolean())),
      os_version: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    },
    {
      additionalProperties: Type.Union([Type.String({ maxLength: DEVICE_STATE_MAX_TEXT }), Type.Number(), Type.Boolean(), Type.Null()]),
      minProperties: 1,
      maxProperties: DEVICE_STATE_MAX_FIELDS,
      propertyNames: { minLength: 1, maxLength: DEVICE_STATE_MAX_NAME },
      description: `Known fields are typed; other scalar fields are kept as given. At most ${DEVICE_STATE_MAX_FIELDS} fields, names of at most ${DEVICE_STATE_MAX_NAME} characters.`,
    },
  ),
});

export const Place = Type.Object(
  {
    stop_id: Type.Optional(Type.String({ maxLength: 255, description: 'A stop of the network.' })),
    depot_id: Type.Optional(Type.String({ maxLength: 128, description: 'A depot of the group.' })),
    lat: Type.Optional(Lat),
    lon: Type.Optional(Lon),
    label: Type.Optional(Type.String({ maxLength: 255, description: 'A name for people.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export const MOVEMENT_KINDS = ['to_trip_start', 'to_depot', 'from_depot', 'between_trips', 'dead_run'] as const;
export const VehicleMovementItem = item('vehicle_movement', 'A movement of the vehicle outside commercial service (HLP).', {
  kind: StringEnum(MOVEMENT_KINDS),
  service_date: ServiceDate,
  block_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  origin: Place,
  destination: Place,
  started_at: At,
  ended_at: At,
  distance_km: Type.Optional(Type.Number({ minimum: 0, maximum: 10_000 })),
});

export const ITEM_SCHEMAS = {
  sign_on: SignOnItem,
  sign_off: SignOffItem,
  trip_start: TripStartItem,
  trip_end: TripEndItem,
  trip_event: TripEventItem,
  position: PositionItem,
  passenger_count: PassengerCountItem,
  device_state: DeviceStateItem,
  vehicle_movement: VehicleMovementItem,
};
export type ItemType = keyof typeof ITEM_SCHEMAS;
export const ITEM_TYPES = Object.keys(ITEM_SCHEMAS) as ItemType[];

export type SignOn = Static<typeof SignOnItem>;
export type SignOff = Static<typeof SignOffItem>;
export type TripStart = Static<typeof TripStartItem>;
export type TripEnd = Static<typeof TripEndItem>;
export type TripEvent = Static<typeof TripEventItem>;
export type Position = Static<typeof PositionItem>;
export type PassengerCount = Static<typeof PassengerCountItem>;
export type DeviceState = Static<typeof DeviceStateItem>;
export type VehicleMovement = Static<typeof VehicleMovementItem>;

export const MAX_BATCH = 1000;

/**
 * What a device sends, as documented: one of the item types, told apart by `type` (a
 * discriminated union, so a generated client gets one type per item). Not used for validation:
 * the batch is checked loosely (ReportBatch) and each item against its own schema (ingest.ts),
 * so that one bad item is rejected alone.
 */
export const DeviceReportItem = component(
  'DeviceReportItem',
  Type.Unsafe<SignOn | SignOff | TripStart | TripEnd | TripEvent | Position | PassengerCount | DeviceState | VehicleMovement>({
    oneOf: ITEM_TYPES.map((t) => ref(ITEM_SCHEMAS[t])),
    discriminator: { propertyName: 'type', mapping: Object.fromEntries(ITEM_TYPES.map((t) => [t, `#/components/schemas/${ITEM_SCHEMAS[t].$id}`])) },
    description: `One report of a device; \`type\` says which: ${ITEM_TYPES.join(', ')}.`,
  }),
);

export const DeviceReportBatch = component(
  'DeviceReportBatch',
  Type.Object(
    { items: Type.Array(ref(DeviceReportItem), { minItems: 1, maxItems: MAX_BATCH, description: `At most ${MAX_BATCH} items, of any types, in any order.` }) },
    { additionalProperties: false, description: 'A batch of device reports. Each item is checked alone: an invalid item is answered in `rejected`, the others are stored.' },
  ),
);

/**
 * The batch body as validated: loosely (an array of objects with a type), then each item against
 * its own schema, so one bad item is rejected alone and the good ones are kept. The document shows
 * DeviceReportBatch instead (op()'s documentedBody).
 */
export const ReportBatch = Type.Object(
  {
    items: Type.Array(
      Type.Object({ id: Type.Optional(Type.Unknown()), type: Type.Optional(Type.Unknown()) }, { additionalProperties: true }),
      { minItems: 1, maxItems: MAX_BATCH },
    ),
  },
  { additionalProperties: false },
);

export const ItemError = Type.Object({ loc: Type.Array(Type.Union([Type.String(), Type.Integer()])), msg: Type.String() }, { additionalProperties: false });
export const BatchAnswer = component('DeviceReportAnswer', Type.Object({
  accepted: Type.Array(Type.String(), { description: 'Ids stored by this request.' }),
  duplicates: Type.Array(Type.String(), { description: 'Ids already stored by an earlier request (retries): acknowledged, not stored again.' }),
  rejected: Type.Array(
    Type.Object({ index: Type.Integer({ description: 'Position of the item in the batch.' }), id: Nullable(Type.String()), errors: Type.Array(ItemError) }, { additionalProperties: false }),
    { description: 'Invalid items, each with its reasons. They were not stored; the other items were. Fix and send them again with the same ids.' },
  ),
  duties: Type.Array(Type.Object({ id: Type.String({ description: 'The sign_on item id.' }), duty_id: Type.String() }, { additionalProperties: false }), { description: 'The duty each accepted or duplicate sign_on opened.' }),
  complete: Type.Boolean({ description: 'true when no item was rejected.' }),
}, { additionalProperties: false, description: 'What became of each item of a batch.' }));
export type BatchAnswer = Static<typeof BatchAnswer>;

// Reads
export const DutyTrip = component('DutyTrip', Type.Object({
  trip_id: Type.String(),
  service_date: Type.String({ format: 'date' }),
  start_time: Nullable(Type.String({ description: 'The start_time of the trip_start, for an instance of a frequency-based trip.' })),
  block_id: Nullable(Type.String()),
  started_at: Nullable(Type.String({ format: 'date-time' })),
  ended_at: Nullable(Type.String({ format: 'date-time' })),
}, { additionalProperties: false, description: 'A trip a duty operated, from its trip_start and trip_end items.' }));

export const DutySignInfo = component('DutySignInfo', Type.Object({
  id: Type.String({ description: 'The id of the sign_on or sign_off item.' }),
  at: Type.String({ format: 'date-time', description: 'The time of the item.' }),
  odometer_km: Type.Optional(Nullable(Type.Number({ description: 'The odometer reading the item gave, in kilometres.' }))),
  info: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'The free information the item gave, as sent.' }))),
}, { additionalProperties: false, description: 'What a sign_on or sign_off item said.' }));

export const DutyRecord = component('Duty', Type.Object({
  duty_id: Type.String(),
  device_id: Type.String(),
  driver_id: Type.String(),
  vehicle_id: Type.String(),
  signed_on_at: Type.String({ format: 'date-time' }),
  signed_off_at: Nullable(Type.String({ format: 'date-time', description: 'null while the duty is open' })),
  end_reason: Nullable(StringEnum(['sign_off', 'next_sign_on'] as const, { description: 'sign_off: closed by the driver; next_sign_on: closed by a new sign-on on the same device' })),
  sign_on: ref(DutySignInfo),
  sign_off: Nullable(ref(DutySignInfo)),
  non_commercial_km: Nullable(Type.Number({ description: 'Kilometres driven outside commercial service during the duty, as declared at sign-off.' })),
  trips: Type.Array(ref(DutyTrip), { description: 'The trips operated, in order.' }),
}, { additionalProperties: false, description: 'A duty: a driver driving a vehicle with a device, from a sign-on to a sign-off (or the next sign-on).' }));
export type DutyRecord = Static<typeof DutyRecord>;
