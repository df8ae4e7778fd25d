import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../platform/http/params.js';
import { component, ref } from '../../platform/http/components.js';
import { DEVICE_STATE_MAX_TEXT, TRIP_EVENT_KINDS } from '../device/schemas.js';

const dangerZoneFields = {
  danger_zone_id: Type.String({ description: 'The zone\'s identifier.' }),
  name: Type.String({ description: 'A name for the office.' }),
  lat: Type.Number({ minimum: -90, maximum: 90, description: 'Latitude of the centre (WGS 84 degrees).' }),
  lon: Type.Number({ minimum: -180, maximum: 180, description: 'Longitude of the centre (WGS 84 degrees).' }),
  radius_m: Type.Number({ exclusiveMinimum: 0, description: 'Radius in metres.' }),
  message: Type.String({ description: 'The message displayed to the driver on approach.' }),
  active_from: Nullable(Type.String({ format: 'date-time', description: 'Start of the zone\'s validity (null: always).' })),
  active_to: Nullable(Type.String({ format: 'date-time', description: 'End of the zone\'s validity (null: open-ended).' })),
  archived: Type.Boolean({ description: 'An archived zone no longer warns drivers.' }),
};
export const DangerZoneRecord = component('DangerZone', Type.Object(dangerZoneFields, { additionalProperties: false, description: 'A point, a radius and a message: the device warns the driver on approach.' }));
export const DangerZoneNear = component('DangerZoneNear', Type.Object(
  { ...dangerZoneFields, distance_m: Type.Number({ minimum: 0, description: 'Distance from the position to the zone edge in metres, 0 inside.' }) },
  { additionalProperties: false, description: 'A danger zone near the device, with its distance.' },
));
export type DangerZoneRecord = Static<typeof DangerZoneRecord>;

const dangerZoneBodyFields = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'A name for the office.' }),
  lat: Type.Number({ minimum: -90, maximum: 90, description: 'Latitude of the centre (WGS 84 degrees).' }),
  lon: Type.Number({ minimum: -180, maximum: 180, description: 'Longitude of the centre (WGS 84 degrees).' }),
  radius_m: Type.Number({ exclusiveMinimum: 0, maximum: 100_000, description: 'Radius in metres.' }),
  message: Type.String({ minLength: 1, maxLength: 500, description: 'The message displayed to the driver on approach.' }),
  active_from: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'Start of validity (null or absent: always).' }))),
  active_to: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'End of validity (null or absent: open-ended).' }))),
};
export const DangerZoneBody = component('DangerZoneCreateBody', Type.Object(dangerZoneBodyFields, { additionalProperties: false, description: 'A new danger zone.' }));
export type DangerZoneBody = Static<typeof DangerZoneBody>;
export const DangerZonePatch = component('DangerZonePatchBody', Type.Partial(Type.Object({ ...dangerZoneBodyFields, archived: Type.Boolean({ description: 'true archives the zone; false brings it back.' }) }), { additionalProperties: false, description: 'The fields to change; the others keep their values.' }));
export type DangerZonePatch = Static<typeof DangerZonePatch>;

export const TripEventRecord = component('TripEvent', Type.Object({
  trip_id: Type.String({ description: 'The GTFS trip.' }),
  service_date: Type.String({ format: 'date', description: 'The trip\'s service date.' }),
  start_time: Nullable(Type.String({ description: 'HH:MM:SS for a frequency-based trip instance' })),
  at: Type.String({ format: 'date-time', description: 'When the event happened, per the device.' }),
  event: StringEnum(TRIP_EVENT_KINDS, { description: 'stop_passed, departure, arrival or state_change' }),
  stop_id: Nullable(Type.String({ description: 'The stop, when the event is at a stop.' })),
  stop_sequence: Nullable(Type.Integer({ minimum: 0, description: 'The call of the trip, when given.' })),
  lat: Nullable(Type.Number({ minimum: -90, maximum: 90, description: 'Latitude (WGS 84 degrees).' })),
  lon: Nullable(Type.Number({ minimum: -180, maximum: 180, description: 'Longitude (WGS 84 degrees).' })),
  gps_valid: Type.Boolean({ description: 'Whether the GPS fix was valid when the event was recorded.' }),
  odometer_km: Nullable(Type.Number({ description: 'Odometer reading, kilometres.' })),
  state: Nullable(Type.String({ description: 'For state_change: the new state.' })),
  device_id: Type.String({ description: 'The device that reported it.' }),
  duty_id: Nullable(Type.String({ description: 'The duty open on the device at that time' })),
  driver_id: Nullable(Type.String({ description: 'The driver of that duty.' })),
  vehicle_id: Nullable(Type.String({ description: 'The vehicle of that duty.' })),
  received_at: Type.String({ format: 'date-time', description: 'When the service received it.' }),
}, { additionalProperties: false, description: 'A timestamped fact of a trip reported by a device: a stop passed, a departure, an arrival, a state change.' }));
export type TripEventRecord = Static<typeof TripEventRecord>;

export const DeviceState = component('DeviceState', Type.Object(
  {
    app_version: Type.Optional(Nullable(Type.String({ description: 'Version of the driver application.' }))),
    battery_pct: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 100, description: 'Battery charge, percent.' }))),
    charging: Type.Optional(Nullable(Type.Boolean())),
    network: Type.Optional(Nullable(Type.String({ description: 'e.g. offline, 2g, 3g, 4g, 5g, wifi' }))),
    gps_enabled: Type.Optional(Nullable(Type.Boolean())),
    os_version: Type.Optional(Nullable(Type.String())),
    current_duty_id: Type.Optional(Nullable(Type.String({ description: 'The duty open on the device (null: nobody signed on).' }))),
    driver_id: Type.Optional(Nullable(Type.String({ description: 'The driver signed on.' }))),
    vehicle_id: Type.Optional(Nullable(Type.String({ description: 'The vehicle signed on.' }))),
  },
  {
    additionalProperties: Type.Union([Type.String({ maxLength: DEVICE_STATE_MAX_TEXT }), Type.Number(), Type.Boolean(), Type.Null()]),
    description: 'The device\'s state: the fields of its device_state reports (known fields typed; the device API takes other scalar fields and keeps them as given) and who is signed on.',
  },
));

export const DeviceHistoryRecord = component('DeviceHistory', Type.Object({
  device_id: Type.String(),
  event_id: Nullable(Type.String({ description: 'Id of the last history event applied (24 hex), null before any' })),
  at: Nullable(Type.String({ format: 'date-time', description: 'Time of that event' })),
  state: ref(DeviceState),
  snapshot_event_id: Nullable(Type.String({ description: 'The snapshot the reconstruction started from' })),
  replayed_events: Type.Integer({ minimum: 0, description: 'How many events were replayed after the snapshot (fewer than 200)' }),
}, { additionalProperties: false, description: 'The full state of a device at an instant, reconstructed from its history.' }));
