import { Type, type Static } from 'typebox';
import { Nullable } from '../../platform/http/params.js';

const LonLat = Type.Tuple([Type.Number(), Type.Number()], { description: '[longitude, latitude] (WGS 84).' });

export const NetworkMap = Type.Object({
  gtfs_id: Nullable(Type.String({ description: 'The GTFS version in force on the date; null when none is published.' })),
  service_date: Type.String({ format: 'date' }),
  timezone: Type.String({ description: 'The group\'s time zone (times of day on the page are shown in it).' }),
  routes: Type.Array(Type.Object({
    route_id: Type.String(),
    short_name: Nullable(Type.String()),
    long_name: Nullable(Type.String()),
    color: Nullable(Type.String()),
    text_color: Nullable(Type.String()),
    shapes: Type.Array(Type.Array(LonLat), { description: 'Every distinct shape of the route\'s trips, as lines of [lon, lat].' }),
  })),
  stops: Type.Array(Type.Object({ stop_id: Type.String(), name: Nullable(Type.String()), lat: Type.Number(), lon: Type.Number() })),
}, { title: 'NetworkMap' });
export type NetworkMap = Static<typeof NetworkMap>;

export const VehicleOnDuty = Type.Object({
  duty_id: Type.String(),
  device_id: Type.String(),
  vehicle_id: Type.String(),
  fleet_number: Nullable(Type.String()),
  driver_id: Type.String(),
  driver_name: Nullable(Type.String()),
  signed_on_at: Type.String({ format: 'date-time' }),
  position: Nullable(Type.Object({
    lat: Type.Number(),
    lon: Type.Number(),
    bearing: Nullable(Type.Number()),
    speed_kmh: Nullable(Type.Number()),
    at: Nullable(Type.String({ format: 'date-time' })),
  }, { description: 'The device\'s latest position (by event time); null before any.' })),
  trip: Nullable(Type.Object({
    trip_id: Type.String(),
    service_date: Type.String({ format: 'date' }),
    start_time: Nullable(Type.String({ description: 'For a frequency-based trip instance.' })),
    route_id: Nullable(Type.String()),
    route_short_name: Nullable(Type.String()),
    route_color: Nullable(Type.String()),
    headsign: Nullable(Type.String()),
    delay_seconds: Nullable(Type.Integer({ description: 'At the last stop event of the trip: its time minus the scheduled time (departure for a departure event, arrival otherwise); negative when early; null before any stop event.' })),
    last_stop_sequence: Nullable(Type.Integer()),
    last_event: Nullable(Type.String()),
  }, { description: 'The trip of the latest position; null when the latest position names none.' })),
}, { title: 'VehicleOnDuty' });
export type VehicleOnDuty = Static<typeof VehicleOnDuty>;
