import { Type, type Static } from 'typebox';
import { Date8, Nullable, ObjectIdString } from '../../platform/http/params.js';

export const Assignment = Type.Object(
  {
    trip_id: Type.String({ minLength: 1, maxLength: 255 }),
    date: Date8('The service date of the trip, YYYYMMDD.'),
    start_time: Type.Optional(Type.String({ pattern: '^[0-9]{1,2}:[0-5][0-9]:[0-5][0-9]$', description: 'For a frequency-based trip: the start time of the instance (HH:MM:SS).' })),
    vehicle_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The vehicle (most efficient).' })),
    license_plate: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'The vehicle, when its id is unknown; must match vehicle_id when both are sent.' })),
    driver_id: Type.Optional(ObjectIdString('The driver (most efficient)')),
    staff_number: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The driver, when the id is unknown; must match driver_id when both are sent.' })),
  },
  { additionalProperties: false, description: 'Attaches a trip and a date to at least one vehicle or one driver.' },
);
export type Assignment = Static<typeof Assignment>;

export const MAX_ASSIGNMENTS = 100_000;

/** spec: PUT planning body: the assignments (JSON), or a CSV file with format=csv. */
export const CSV_COLUMNS = ['trip_id', 'date', 'start_time', 'vehicle_id', 'license_plate', 'driver_id', 'staff_number'] as const;

export const PlanningRecord = Type.Object({
  trip_id: Type.String(),
  date: Type.String({ pattern: '^[0-9]{8}$', description: 'The service date, YYYYMMDD (as in the query).' }),
  service_date: Type.String({ format: 'date' }),
  start_time: Type.String({ description: 'Scheduled first departure (HH:MM:SS, may pass 24:00:00): with trip_id, identifies the trip instance.' }),
  end_time: Type.String({ description: 'Scheduled last arrival (HH:MM:SS).' }),
  departure_at: Type.String({ format: 'date-time' }),
  arrival_at: Type.String({ format: 'date-time' }),
  route_id: Type.String(),
  route_short_name: Nullable(Type.String()),
  block_id: Nullable(Type.String()),
  first_stop_id: Type.String(),
  last_stop_id: Type.String(),
  gtfs_id: Type.String({ description: 'The GTFS version in force on the date, whose trip this is.' }),
  vehicle_id: Nullable(Type.String()),
  license_plate: Nullable(Type.String()),
  fleet_number: Nullable(Type.String()),
  driver_id: Nullable(Type.String()),
  staff_number: Nullable(Type.String()),
  driver_name: Nullable(Type.String()),
  filename: Nullable(Type.String({ description: 'The file the assignment came from (audit).' })),
  updated_at: Type.String({ format: 'date-time' }),
});
export type PlanningRecord = Static<typeof PlanningRecord>;
