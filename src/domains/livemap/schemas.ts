import { Type, type Static } from 'typebox';
import { Nullable } from '../../platform/http/params.js';
import { component, ref } from '../../platform/http/components.js';

const LonLat = Type.Tuple([Type.Number({ minimum: -180, maximum: 180 }), Type.Number({ minimum: -90, maximum: 90 })], { description: '[longitude, latitude] (WGS 84 degrees).' });

export const MapRoute = component('MapRoute', Type.Object({
  route_id: Type.String({ description: 'GTFS route_id.' }),
  short_name: Nullable(Type.String({ description: 'routes.txt route_short_name.' })),
  long_name: Nullable(Type.String({ description: 'routes.txt route_long_name.' })),
  color: Nullable(Type.String({ description: 'routes.txt route_color (six hexadecimal digits).' })),
  text_color: Nullable(Type.String({ description: 'routes.txt route_text_color (six hexadecimal digits).' })),
  shapes: Type.Array(Type.Array(LonLat), { description: 'Every distinct shape of the route\'s trips, as lines of [lon, lat].' }),
}, { additionalProperties: false, description: 'A route of the network map, with the lines it draws.' }));

export const MapStop = component('MapStop', Type.Object({
  stop_id: Type.String({ description: 'GTFS stop_id.' }),
  name: Nullable(Type.String({ description: 'stops.txt stop_name.' })),
  lat: Type.Number({ minimum: -90, maximum: 90, description: 'Latitude (WGS 84 degrees).' }),
  lon: Type.Number({ minimum: -180, maximum: 180, description: 'Longitude (WGS 84 degrees).' }),
}, { additionalProperties: false, description: 'A stop of the network map.' }));

export const NetworkMap = component('NetworkMap', Type.Object({
  gtfs_id: Nullable(Type.String({ description: 'The GTFS version in force on the date; null when none is published.' })),
  service_date: Type.String({ format: 'date' }),
  timezone: Type.String({ description: 'The group\'s time zone (times of day on the page are shown in it).' }),
  routes: Type.Array(ref(MapRoute)),
  stops: Type.Array(ref(MapStop)),
}, { additionalProperties: false, title: 'NetworkMap', description: 'The network drawn on the live map: routes with their shapes, and stops, of the GTFS in force on the date.' }));
export type NetworkMap = Static<typeof NetworkMap>;

export const MapPosition = component('MapPosition', Type.Object({
  lat: Type.Number({ minimum: -90, maximum: 90, description: 'Latitude (WGS 84 degrees).' }),
  lon: Type.Number({ minimum: -180, maximum: 180, description: 'Longitude (WGS 84 degrees).' }),
  bearing: Nullable(Type.Number({ minimum: 0, maximum: 360, description: 'Heading, degrees clockwise from north.' })),
  speed_kmh: Nullable(Type.Number({ minimum: 0, description: 'Speed, km/h.' })),
  at: Nullable(Type.String({ format: 'date-time', description: 'When the device took the position.' })),
}, { additionalProperties: false, description: 'The device\'s latest position (by event time).' }));

export const MapTrip = component('MapTrip', Type.Object({
  trip_id: Type.String({ description: 'GTFS trip_id.' }),
  service_date: Type.String({ format: 'date' }),
  start_time: Nullable(Type.String({ description: 'For a frequency-based trip instance.' })),
  route_id: Nullable(Type.String({ description: 'GTFS route_id; null when the trip is not in the GTFS in force.' })),
  route_short_name: Nullable(Type.String()),
  route_color: Nullable(Type.String({ description: 'Six hexadecimal digits.' })),
  headsign: Nullable(Type.String({ description: 'trips.txt trip_headsign.' })),
  delay_seconds: Nullable(Type.Integer({ description: 'At the last stop event of the trip: its time minus the scheduled time (departure for a departure event, arrival otherwise); negative when early; null before any stop event.' })),
  last_stop_sequence: Nullable(Type.Integer({ minimum: 0, description: 'The call of that stop event.' })),
  last_event: Nullable(Type.String({ description: 'The kind of that stop event: stop_passed, departure or arrival (trip event kinds).' })),
}, { additionalProperties: false, description: 'The trip a vehicle on duty is running, with its delay.' }));

export const VehicleOnDuty = component('VehicleOnDuty', Type.Object({
  duty_id: Type.String({ description: 'The open duty.' }),
  device_id: Type.String({ description: 'The duty\'s device.' }),
  vehicle_id: Type.String({ description: 'The duty\'s vehicle.' }),
  fleet_number: Nullable(Type.String({ description: 'Its fleet number.' })),
  driver_id: Type.String({ description: 'The duty\'s driver.' }),
  driver_name: Nullable(Type.String({ description: 'Their full name.' })),
  signed_on_at: Type.String({ format: 'date-time' }),
  position: Type.Union([ref(MapPosition), Type.Null()], { description: 'The device\'s latest position (by event time); null before any.' }),
  trip: Type.Union([ref(MapTrip), Type.Null()], { description: 'The trip of the latest position; null when the latest position names none.' }),
}, { additionalProperties: false, title: 'VehicleOnDuty', description: 'A vehicle on duty on the live map: who drives it, where it is, what trip it runs.' }));
export type VehicleOnDuty = Static<typeof VehicleOnDuty>;
