import { Type, type Static } from 'typebox';
import { Nullable } from '../../platform/http/params.js';

export const DangerZoneRecord = Type.Object({
  danger_zone_id: Type.String(),
  name: Type.String(),
  lat: Type.Number({ description: 'Latitude of the centre (WGS 84).' }),
  lon: Type.Number({ description: 'Longitude of the centre (WGS 84).' }),
  radius_m: Type.Number({ description: 'Radius in metres.' }),
  message: Type.String({ description: 'The message displayed to the driver on approach.' }),
  active_from: Nullable(Type.String({ format: 'date-time' })),
  active_to: Nullable(Type.String({ format: 'date-time' })),
  archived: Type.Boolean(),
});
export type DangerZoneRecord = Static<typeof DangerZoneRecord>;

export const DangerZoneBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    lat: Type.Number({ minimum: -90, maximum: 90 }),
    lon: Type.Number({ minimum: -180, maximum: 180 }),
    radius_m: Type.Number({ exclusiveMinimum: 0, maximum: 100_000 }),
    message: Type.String({ minLength: 1, maxLength: 500 }),
    active_from: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
    active_to: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  },
  { additionalProperties: false },
);
export type DangerZoneBody = Static<typeof DangerZoneBody>;
export const DangerZonePatch = Type.Partial(Type.Object({ ...DangerZoneBody.properties, archived: Type.Boolean() }), { additionalProperties: false });
export type DangerZonePatch = Static<typeof DangerZonePatch>;

export const TripEventRecord = Type.Object({
  trip_id: Type.String(),
  service_date: Type.String({ format: 'date' }),
  start_time: Nullable(Type.String({ description: 'HH:MM:SS for a frequency-based trip instance' })),
  at: Type.String({ format: 'date-time' }),
  event: Type.String({ description: 'stop_passed, departure, arrival or state_change' }),
  stop_id: Nullable(Type.String()),
  stop_sequence: Nullable(Type.Integer()),
  lat: Nullable(Type.Number()),
  lon: Nullable(Type.Number()),
  gps_valid: Type.Boolean(),
  odometer_km: Nullable(Type.Number()),
  state: Nullable(Type.String()),
  device_id: Type.String(),
  duty_id: Nullable(Type.String({ description: 'The duty open on the device at that time' })),
  driver_id: Nullable(Type.String()),
  vehicle_id: Nullable(Type.String()),
  received_at: Type.String({ format: 'date-time' }),
});
export type TripEventRecord = Static<typeof TripEventRecord>;

export const DeviceHistoryRecord = Type.Object({
  device_id: Type.String(),
  event_id: Nullable(Type.String({ description: 'Id of the last history event applied (24 hex), null before any' })),
  at: Nullable(Type.String({ format: 'date-time', description: 'Time of that event' })),
  state: Type.Object({}, {
    additionalProperties: true,
    description: 'The full state: the fields of device_state reports (app_version, battery_pct, charging, network, gps_enabled, os_version, …) and who is signed on (current_duty_id, driver_id, vehicle_id).',
  }),
  snapshot_event_id: Nullable(Type.String({ description: 'The snapshot the reconstruction started from' })),
  replayed_events: Type.Integer({ description: 'How many events were replayed after the snapshot (fewer than 200)' }),
});
