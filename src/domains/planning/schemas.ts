import { Type, type Static } from 'typebox';
import { Date8, Nullable, ObjectIdString } from '../../platform/http/params.js';
import { component, ref } from '../../platform/http/components.js';

export const Assignment = component('PlanningAssignment', Type.Object(
  {
    trip_id: Type.String({ minLength: 1, maxLength: 255, description: 'The GTFS trip, running on the date per the GTFS in force.' }),
    date: Date8('The service date of the trip, YYYYMMDD.'),
    start_time: Type.Optional(Type.String({ pattern: '^[0-9]{1,2}:[0-5][0-9]:[0-5][0-9]$', description: 'For a frequency-based trip: the start time of the instance (HH:MM:SS).' })),
    vehicle_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The vehicle (most efficient).' })),
    license_plate: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'The vehicle, when its id is unknown; must match vehicle_id when both are sent.' })),
    driver_id: Type.Optional(ObjectIdString('The driver (most efficient)')),
    staff_number: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The driver, when the id is unknown; must match driver_id when both are sent.' })),
  },
  { additionalProperties: false, description: 'Attaches a trip and a date to at least one vehicle or one driver.' },
));
export type Assignment = Static<typeof Assignment>;

export const MAX_ASSIGNMENTS = 100_000;

/** spec: PUT planning body: the assignments (JSON), or a CSV file with format=csv. */
export const CSV_COLUMNS = ['trip_id', 'date', 'start_time', 'vehicle_id', 'license_plate', 'driver_id', 'staff_number'] as const;

export const PlanningRecord = component('Planning', Type.Object({
  trip_id: Type.String({ description: 'The GTFS trip.' }),
  date: Type.String({ pattern: '^[0-9]{8}$', description: 'The service date, YYYYMMDD (as in the query).' }),
  service_date: Type.String({ format: 'date', description: 'The same service date, YYYY-MM-DD.' }),
  start_time: Type.String({ description: 'Scheduled first departure (HH:MM:SS, may pass 24:00:00): with trip_id, identifies the trip instance.' }),
  end_time: Type.String({ description: 'Scheduled last arrival (HH:MM:SS).' }),
  departure_at: Type.String({ format: 'date-time', description: 'Scheduled first departure, as an instant.' }),
  arrival_at: Type.String({ format: 'date-time', description: 'Scheduled last arrival, as an instant.' }),
  route_id: Type.String({ description: 'The trip\'s GTFS route.' }),
  route_short_name: Nullable(Type.String()),
  block_id: Nullable(Type.String({ description: 'The trip\'s block (sequence of trips chained by one vehicle).' })),
  first_stop_id: Type.String({ description: 'The trip\'s first stop.' }),
  last_stop_id: Type.String({ description: 'The trip\'s last stop.' }),
  gtfs_id: Type.String({ description: 'The GTFS version in force on the date, whose trip this is.' }),
  vehicle_id: Nullable(Type.String({ description: 'The assigned vehicle (null: no vehicle assigned).' })),
  license_plate: Nullable(Type.String({ description: 'Its registration plate.' })),
  fleet_number: Nullable(Type.String({ description: 'Its fleet number.' })),
  driver_id: Nullable(Type.String({ description: 'The assigned driver (null: no driver assigned).' })),
  staff_number: Nullable(Type.String({ description: 'Their payroll number.' })),
  driver_name: Nullable(Type.String({ description: 'Their full name.' })),
  filename: Nullable(Type.String({ description: 'The file the assignment came from (audit).' })),
  updated_at: Type.String({ format: 'date-time', description: 'When the assignment was last written.' }),
}, { additionalProperties: false, description: 'The planning of a trip instance on a date: its schedule and the vehicle and driver assigned to it.' }));
export type PlanningRecord = Static<typeof PlanningRecord>;

/** PUT planning's body: the assignments as JSON, or a CSV file with format=csv. */
export const PlanningBody = component('PlanningBody', Type.Union(
  [Type.Array(ref(Assignment), { minItems: 1, maxItems: MAX_ASSIGNMENTS }), Type.String({ description: 'The CSV file (format=csv).' })],
  { description: `format=json: a JSON array of 1 to ${MAX_ASSIGNMENTS} assignments; format=csv: the CSV file.` },
));
