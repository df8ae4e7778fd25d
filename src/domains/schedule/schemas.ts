/**
 * The published schedule of a service day in one read (GET /groups/{g}/schedule): what a
 * simulator, a control-room console or a journey planner needs to follow the day's trips without
 * one request per trip. Column arrays instead of one object per stop time keep the answer compact
 * (about 30 bytes per stop time): a whole city's day is a few megabytes.
 */
import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../platform/http/params.js';
import { component, ref } from '../../platform/http/components.js';

const Seconds = Type.Integer({ description: 'Seconds since the start of the service day (noon minus 12 h; 25:10:00 = 90600).' });

export const ScheduleStopTimes = component('ScheduleStopTimes', Type.Object(
  {
    stop_id: Type.Array(Type.String(), { description: 'The stop of each call.' }),
    stop_sequence: Type.Array(Type.Integer({ minimum: 0 }), { description: 'stop_times.txt stop_sequence of each call.' }),
    arrival: Type.Array(Nullable(Seconds), { description: 'Scheduled arrival; null where the feed gives no time at an intermediate stop (not interpolated).' }),
    departure: Type.Array(Nullable(Seconds), { description: 'Scheduled departure; null where the feed gives no time.' }),
    timepoint: Type.Array(Nullable(Type.Integer({ minimum: 0, maximum: 1 })), { description: 'stop_times.txt timepoint (1 exact, 0 approximate; null when absent).' }),
    shape_dist_traveled: Type.Array(Nullable(Type.Number()), { description: 'stop_times.txt shape_dist_traveled, in the feed\'s unit; null when absent.' }),
  },
  { additionalProperties: false, title: 'ScheduleStopTimes', description: 'The calls of a trip, in stop_sequence order, as parallel arrays (element i of each array is the i-th call).' },
));

export const ScheduleFrequency = component('ScheduleFrequency', Type.Object(
  {
    headway_secs: Type.Integer({ minimum: 1, description: 'Seconds between two departures.' }),
    exact_times: Type.Integer({ minimum: 0, maximum: 1, description: 'frequencies.txt exact_times: 0 frequency-based, 1 schedule-based.' }),
  },
  { additionalProperties: false, description: 'The frequencies.txt row of a frequency instance.' },
));

export const ScheduleTrip = component('ScheduleTrip', Type.Object(
  {
    trip_id: Type.String({ description: 'The GTFS trip.' }),
    start_time: Type.String({ description: 'HH:MM:SS of the first departure (may pass 24:00:00): with trip_id, identifies a frequency instance, as in GTFS-Realtime and the device API.' }),
    route_id: Type.String(),
    service_id: Type.String(),
    direction_id: Nullable(Type.Integer({ minimum: 0, maximum: 1, description: 'trips.txt direction_id.' })),
    block_id: Nullable(Type.String({ description: 'trips.txt block_id.' })),
    shape_id: Nullable(Type.String({ description: 'trips.txt shape_id.' })),
    headsign: Nullable(Type.String({ description: 'trips.txt trip_headsign.' })),
    frequency: Type.Union([ref(ScheduleFrequency), Type.Null()], { description: 'The frequencies.txt row of a frequency instance; null for a trip of the timetable.' }),
    first_departure: Seconds,
    last_arrival: Seconds,
    stop_times: ref(ScheduleStopTimes),
  },
  { additionalProperties: false, title: 'ScheduleTrip', description: 'A trip (or frequency instance) running on the service date, with its calls.' },
));

export const ScheduleStop = component('ScheduleStop', Type.Object(
  {
    stop_id: Type.String(),
    name: Nullable(Type.String({ description: 'stops.txt stop_name.' })),
    lat: Nullable(Type.Number({ minimum: -90, maximum: 90, description: 'Latitude (WGS 84 degrees).' })),
    lon: Nullable(Type.Number({ minimum: -180, maximum: 180, description: 'Longitude (WGS 84 degrees).' })),
  },
  { additionalProperties: false, title: 'ScheduleStop', description: 'A stop the trips of the day call at.' },
));

export const ScheduleShape = component('ScheduleShape', Type.Object(
  {
    shape_id: Type.String(),
    lat: Type.Array(Type.Number({ minimum: -90, maximum: 90 }), { description: 'Latitude of each point (WGS 84 degrees).' }),
    lon: Type.Array(Type.Number({ minimum: -180, maximum: 180 }), { description: 'Longitude of each point (WGS 84 degrees).' }),
    dist_traveled: Type.Array(Nullable(Type.Number()), { description: 'shapes.txt shape_dist_traveled per point; null when absent.' }),
  },
  { additionalProperties: false, title: 'ScheduleShape', description: 'The points of a shape in shape_pt_sequence order, as parallel arrays.' },
));

export const DAY_TYPE_VALUES = ['weekday', 'saturday', 'sunday'] as const;

export const ServiceDaySchedule = component('ServiceDaySchedule', Type.Object(
  {
    group_id: Type.String(),
    service_date: Type.String({ format: 'date' }),
    gtfs_id: Nullable(Type.String({ description: 'The GTFS version in force on the date; null (and no trips) when the group has published none.' })),
    timezone: Type.String({ description: 'The group\'s time zone: the service day\'s times are counted from day_start.' }),
    day_start: Type.String({ format: 'date-time', description: 'The instant the service day\'s seconds count from (noon of the date in the time zone minus 12 h).' }),
    day_type: StringEnum(DAY_TYPE_VALUES, {
      description: 'weekday, saturday or sunday by the GTFS calendars: a date on which calendar_dates.txt adds a Sunday-only (Saturday-only) service counts as a Sunday (Saturday), as the predictions read it.',
    }),
    trips: Type.Array(ref(ScheduleTrip), { description: 'The trips running on the date (frequency-based trips expanded into their instances), ordered by first departure, then trip_id.' }),
    stops: Type.Array(ref(ScheduleStop), { description: 'The stops the listed trips call at, by stop_id.' }),
    shapes: Type.Array(ref(ScheduleShape), { description: 'The shapes of the listed trips, by shape_id (empty with include_shapes=false).' }),
  },
  { additionalProperties: false, title: 'ServiceDaySchedule', description: 'The published schedule of a service day: its trips with their calls, the stops and the shapes.' },
));
export type ServiceDaySchedule = Static<typeof ServiceDaySchedule>;
export type ScheduleTrip = Static<typeof ScheduleTrip>;
