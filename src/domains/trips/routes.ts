/**
 * Trips of a date, the trip object, trip-tracking stats and the exports of the actual side
 * (issue #7). Definitions of statuses, delays and kilometres: trips/tracking.ts, repeated in the
 * descriptions below.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sendCsv } from '../../platform/csv.js';
import { EXPORTERS, OFFICE, RS2, groupRoles } from '../../platform/http/access.js';
import { Date8, DateIso, GroupId, GroupParams, isoDate } from '../../platform/http/params.js';
import { PeriodQuery } from '../../platform/http/periods.js';
import { AnyRecord, DATAHUB, PUBLIC, op } from '../../platform/http/route.js';
import { period } from '../../platform/time.js';
import type { Db } from '../../platform/db/index.js';
import { requireGroup } from '../groups/service.js';
import {
  PCS_CNT_COLUMNS, TRIPS_COLUMNS, TRIP_TRACKING_COLUMNS, doorColumns, doorsOfPeriod, exportTripTracking, exportTrips, exportVehicleExploitation,
} from './exports.js';
import { GPS_UNRELIABLE_SHARE, getTrip, listTripsOfDate } from './service.js';
import { Trip, TripOfDay, TripTrackingStats } from './schemas.js';
import { ref } from '../../platform/http/components.js';
import { EARLY_BEFORE_SECONDS, LATE_AFTER_SECONDS, tripTrackingStats } from './stats.js';
import { ARRIVAL_BEFORE_M, DEPARTURE_BEYOND_M, DEPARTURE_CLEAR_M, KM_DEADBAND_M, OFF_KM_DEADBAND_M, STOP_RADIUS_M } from './passages.js';
import {
  GPS_GAP_SECONDS, NOT_DONE_AFTER_SECONDS, OFF_ITINERARY_M, STOP_STATUSES, TRIP_CLOSE_AFTER_SECONDS, TRIP_STATUSES,
} from './tracking.js';

const CsvResponse = { description: 'CSV', content: { 'text/csv': { schema: Type.String() } } };
/** The longest period of the stats and of the period exports, in days. */
export const MAX_TRACKING_DAYS = 31;

const list = (o: Record<string, string>) => Object.entries(o).map(([k, v]) => `\`${k}\`: ${v}`).join('; ');

export const DEFINITIONS = [
  `**Trip statuses**: ${list(TRIP_STATUSES)}. A recorded trip is over when a trip_end was reported, its last stop was passed, or ${TRIP_CLOSE_AFTER_SECONDS / 60} minutes after its scheduled end; a trip with nothing recorded is not_done ${NOT_DONE_AFTER_SECONDS / 60} minutes after its scheduled end.`,
  `**Stop statuses**: ${list(STOP_STATUSES)}.`,
  '**Arrival and departure** at a stop (`actual_arrival_at`, `actual_departure_at`; `dwell_seconds` = their difference): from the trip events of the stop first (arrival: the first `arrival`, else `stop_passed`; ' +
    'departure: the last `departure`, else `stop_passed`), else from the trip\'s positions with a valid fix, by progress along the itinerary (the GTFS shape, else the line through the stops; ' +
    'each fix projected near the previous one, so loops and stops close together are told apart): the vehicle arrives when it reaches ' + `${ARRIVAL_BEFORE_M} m before the stop (the first stop: also its first fix within ${STOP_RADIUS_M} m of it) and departs once it is ${DEPARTURE_BEYOND_M} m beyond it ` +
    `on two consecutive fixes (or ${DEPARTURE_CLEAR_M} m on one), never while approaching or dwelling; a bus laying over at the first stop departs when it leaves. ` +
    `A stop crossed off itinerary (farther than ${OFF_ITINERARY_M} m) or during a GPS gap (fixes more than ${GPS_GAP_SECONDS} s apart) gets no time from positions. ` +
    '**A stop is passed** (`actual_at`) at its departure (the last stop: at its arrival); a stop with only an arrival event is passed at that event.',
  '**Delay**: passing time minus scheduled time (departure; arrival for the last stop), in seconds, negative when early. The trip\'s delay is the delay at the last stop passed.',
  '**Kilometres** (km, rounded to the metre, measured with cheap-ruler from the positions reporting the trip_id and service date, consecutive per device): ' +
    '`tk` planned km = length of the GTFS shape (of the line through the stops without a shape); `vk` = the distance driven with GPS noise filtered out: ' +
    `on the itinerary the progress along it (median of 5 fixes, counted once it advanced more than ${KM_DEADBAND_M} m; at the end, up to the median of the last 3), off it the distance between medians of 5 fixes counted once more than ${OFF_KM_DEADBAND_M} m apart, ` +
    'so a parked or dwelling vehicle adds nothing; ' +
    `\`reliable_km\` = the part of vk between valid fixes at most ${GPS_GAP_SECONDS} s apart, \`unreliable_km\` = vk − reliable_km; ` +
    `\`off_itinerary_km\` = the part of vk farther than ${OFF_ITINERARY_M} m from the shape; \`recorded_commercial_km\` = the progress along the shape, at most tk; ` +
    '`percent_km` = recorded_commercial_km / tk × 100, one decimal. Method and tests: docs/tracking.md.',
].join('\n\n');

async function timezoneOf(db: Db, groupId: string): Promise<string> {
  return (await requireGroup(db, groupId)).timezone;
}

export async function tripRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  app.get('/groups/:group_id/trips', {
    schema: op(
      {
        operationId: 'listTripsOfDate', summary: 'Recorded and scheduled trips of a date', tags: ['trips'], deprecated: true, access: groupRoles(RS2, 'ListTripsRoleRequired', 'read'), documents: PUBLIC,
        description: [
          'Each item is `kind: recorded` (something was recorded for the trip: tracking summary with status, delay_seconds, started_at, ended_at, recorded_stops, vehicle, driver and device ids) ' +
            'or `kind: scheduled` (the schedule only). Items: id (trip_id), service_date, start_time, route_id, headsign, direction_id, block_id, departure_time and arrival_time (scheduled, ISO 8601), status, ' +
            'delay_seconds, started_at, ended_at, recorded_stops, planned_stops, vehicle_ids, driver_ids, device_ids; ordered by scheduled departure, then trips recorded without being scheduled.',
          'A caller limited to teams gets the recorded trips operated by a vehicle or driver of their teams, and no scheduled-only item.',
          DEFINITIONS,
        ].join('\n\n'),
      },
      { params: GroupParams, querystring: Type.Object({ date: Date8() }), response: { 200: Type.Array(ref(TripOfDay)) } },
    ),
  }, async (req) => listTripsOfDate(ctx.db, req.groupScope!, isoDate(req.query.date), ctx.clock.now()));

  app.get('/groups/:group_id/trips/:trip_id', {
    schema: op(
      {
        operationId: 'getTrip', summary: 'A trip on a date: schedule, execution and gap', tags: ['trips'], access: groupRoles(RS2, 'GetTripRoleRequired', 'read'), documents: PUBLIC,
        // Reads the reports through the tracking it refreshes: any report invalidates it.
        cache: { except: ['login_failures', 'sms_notifications', 'device_history_events', 'device_history_snapshots'], clock: true },
        description: [
          'Fields: `id` (trip_id); `departure_time`, `arrival_time` (scheduled first departure and last arrival, ISO 8601); `service_date`; `formatted_name` (route short name, → headsign, start HH:MM); ' +
            '`temporality` (`past`, `current` or `future` against the clock and the status); `status` (below); `route`; `first_stop`, `last_stop` (id, name, stop_sequence); ' +
            '`passenger_count` (boardings and alightings summed over doors and categories; `loading` = the largest number on board between two stops); kilometres (below); ' +
            '`current_delay_seconds`; `delay`: the stops with scheduled_at, actual_at, actual_arrival_at, actual_departure_at, dwell_seconds, delay_seconds, status, source (`event` or `position`), vehicle_id, boardings, alightings; ' +
            '`vehicles`, `drivers`, `devices` that recorded the trip (first seen first; a vehicle swap lists both); `trips`: the recorded runs (device, started_at, ended_at) of the trip; ' +
            '`gtfs`: the version in force on the date (id, name, publication_date); `updates`: the trip updates in force (cancelled, skipped, moved and added stops, detour, messages, applied); ' +
            '`problems`; `service` (recorded_stops, planned_stops); `planned` (planning\'s vehicle and driver ids); ' +
            '`predictions`: for a trip in progress, each stop ahead with its predicted `arrival_at`, `departure_at`, `uncertainty_seconds` (one standard deviation) and `basis` ' +
            '(`history`: the running time learned from the group\'s tracking; `schedule`: too little history) — empty otherwise (docs/predictions.md).',
          '`merge=true` merges the trip updates into the stop list `delay`: added stops appear in place with status `added`, moved stops carry `moved_to`. Without it, `delay` lists the scheduled stops only (updates show as stop statuses).',
          '`problems` is an object keyed by problem (empty: nothing to look at): `no_sign_on` (nothing recorded for a trip planned or over), `different_vehicle` / `different_driver` (recorded against planning), ' +
            `\`vehicle_change\` (several vehicles), \`missing_stops\`, \`gps_unreliable\` (unreliable_km above ${GPS_UNRELIABLE_SHARE * 100} % of vk), \`off_itinerary\`, \`operated_while_cancelled\`.`,
          'A caller limited to teams reads a trip operated (else planned) with a vehicle or driver of their teams, or with none known; otherwise 403 ForbiddenDifferentTeam. ' +
            'The vehicles, drivers and devices of such a trip that the caller does not see (another team\'s; a device of no team) are named by id only: their other fields are null.',
          'Frequency-based trips: tracking is kept per trip_id and date; the instance shown is the one whose start time the reports name (else the first).',
          DEFINITIONS,
        ].join('\n\n'),
        errors: { 404: { TripNotFound: 'the trip neither runs nor was recorded on that date' }, 403: { ForbiddenDifferentTeam: 'the trip was operated by another team' } },
      },
      {
        params: Type.Object({ group_id: GroupId, trip_id: Type.String({ minLength: 1, maxLength: 255 }) }),
        querystring: Type.Object({ date: DateIso('The service date, YYYY-MM-DD.'), merge: Type.Optional(Type.Boolean({ default: false, description: 'Merge the trip updates into the stop list (see the description).' })) }),
        response: { 200: ref(Trip) },
      },
    ),
  }, async (req) => getTrip(ctx.db, req.groupScope!, { tripId: req.params.trip_id, serviceDate: req.query.date, merge: req.query.merge ?? false, now: ctx.clock.now(), predictions: ctx.config.predictions }));

  app.get('/groups/:group_id/export/trips', {
    schema: op(
      {
        operationId: 'exportTrips', summary: 'Recorded trips of a date as CSV (datahub)', tags: ['exports', 'trips'], access: groupRoles(EXPORTERS, 'ExportTripsRoleRequired', 'export'), documents: DATAHUB, produces: ['text/csv'],
        description: [
          `One line per trip with something recorded on the date, ordered by trip_id. Columns: ${TRIPS_COLUMNS.join(';')}. Times are ISO 8601 local times with their UTC offset; ` +
            'lists (vehicle_ids, driver_ids, device_ids) are joined by `,`; skipped_stops counts stops not passed that a trip update skips, missed_stops the others once the trip is over. Streamed.',
          DEFINITIONS,
        ].join('\n\n'),
      },
      { params: GroupParams, querystring: Type.Object({ date: Date8() }), response: { 200: CsvResponse } },
    ),
  }, async (req, reply) => {
    const scope = req.groupScope!;
    const tz = await timezoneOf(ctx.db, scope.groupId);
    return sendCsv(reply, `trips_${req.query.date}.csv`, TRIPS_COLUMNS, exportTrips(ctx.db, scope, isoDate(req.query.date), tz, ctx.clock.now()));
  });

  app.get('/groups/:group_id/export/vehicle-exploitation', {
    schema: op(
      {
        operationId: 'exportVehicleExploitation', summary: 'Vehicle exploitation rows (PCS-CNT layout) as CSV', tags: ['exports'], access: groupRoles(EXPORTERS, 'ExportVehicleExploitationRoleRequired', 'export'), documents: PUBLIC, produces: ['text/csv'],
        description: [
          `PCS-CNT layout, \`;\`-separated with a header line: ${PCS_CNT_COLUMNS.join(';')}, then PORTE_<nn>_validity;PORTE_<nn>_adults_in;PORTE_<nn>_adults_out for doors 01 to the most doors counted on one trip of the period (at least 01).`,
          'One line per recorded trip and scheduled stop, ordered by service date, trip_id and stop_sequence. fileId = `<vehicle>_<YYYYMMDD>`; unitId = the vehicle at the stop (else the first vehicle of the trip); ' +
            'drivingMode and journeyType = `commercial`; stopId and stationCode = stop_id; arrivalTime and departureTime = the time the stop was passed (ISO 8601 local time with UTC offset; empty when not passed; one passing time is kept per stop); ' +
            'SAEvalidity = 1 when the stop was passed, else 0; journey = `<YYYYMMDD>_<trip_id>`; line = route_id; trip = trip_id; tripDirection = direction_id; vehicleService = block_id; ' +
            'stationOrigin and stationDestination = first and last stop_id of the trip; station = stop name; stationIndex = stop_sequence; stationType = `first`, `intermediate` or `last`; ' +
            'GPSvalidity = 1 when the passing fix was valid; latitude and longitude with a decimal comma (of the passing fix, else of the stop).',
          'Doors: validity 1 when counts were reported for that door at that stop (adults_in and adults_out then hold the boardings and alightings of every passenger category), else 0 with zero counts.',
          `Period: start_date and end_date inclusive, at most ${MAX_TRACKING_DAYS} days. Streamed with flat memory.`,
        ].join('\n\n'),
      },
      { params: GroupParams, querystring: Type.Object({ ...PeriodQuery }), response: { 200: CsvResponse } },
    ),
  }, async (req, reply) => {
    const scope = req.groupScope!;
    const tz = await timezoneOf(ctx.db, scope.groupId);
    const p = period(req.query.start_date, req.query.end_date, tz, MAX_TRACKING_DAYS);
    const doors = await doorsOfPeriod(ctx.db, scope.groupId, p);
    return sendCsv(reply, `vehicle-exploitation_${p.start}_${p.end}.csv`, [...PCS_CNT_COLUMNS, ...doorColumns(doors)], exportVehicleExploitation(ctx.db, scope, p, tz, doors));
  });

  app.get('/groups/:group_id/stats/trip-tracking', {
    schema: op(
      {
        operationId: 'getTripTrackingStats', summary: 'Punctuality, delays and completion over a period', tags: ['stats', 'trips'], access: groupRoles(OFFICE, 'GetTripTrackingStatsRoleRequired', 'read'), documents: PUBLIC,
        description: [
          `Totals, and the same figures by day (\`by_day\`), by route (\`by_route\`) and, with group_by_team=true, by team (\`by_team\`: a trip counts for every team of its vehicles and drivers).`,
          `Punctuality over stop passages (stops passed with a scheduled time): early when the delay is below ${EARLY_BEFORE_SECONDS} s, late above ${LATE_AFTER_SECONDS} s, on time in between (inclusive); ` +
            'punctuality_percent = on_time / stop_passages × 100. Delay average and percentiles p50, p90, p95 (nearest rank) and maximum over the same passages, in seconds.',
          'Trips: the scheduled trips of each date plus those recorded without being scheduled, counted per status (`<status>_trips`); missing_trips = not_done_trips. ' +
            'tk sums the planned km of the trips not cancelled; vk and the other km sum the recorded trips; percent_km = recorded_commercial_km / tk × 100.',
          `A caller limited to teams gets the recorded trips of their teams only. Period: at most ${MAX_TRACKING_DAYS} days.`,
          DEFINITIONS,
        ].join('\n\n'),
      },
      { params: GroupParams, querystring: Type.Object({ ...PeriodQuery, group_by_team: Type.Optional(Type.Boolean({ default: false, description: 'Add the figures by team.' })) }), response: { 200: ref(TripTrackingStats) } },
    ),
  }, async (req) => {
    const scope = req.groupScope!;
    const p = period(req.query.start_date, req.query.end_date, await timezoneOf(ctx.db, scope.groupId), MAX_TRACKING_DAYS);
    return tripTrackingStats(ctx.db, scope, p, { byTeam: req.query.group_by_team ?? false, now: ctx.clock.now() });
  });

  app.get('/groups/:group_id/export/trip-tracking', {
    schema: op(
      {
        operationId: 'exportTripTracking', summary: 'Tracking detail per trip and stop as CSV', tags: ['exports', 'trips'], access: groupRoles(EXPORTERS, 'ExportTripTrackingRoleRequired', 'export'), documents: PUBLIC, produces: ['text/csv'],
        description: [
          `One line per recorded trip and scheduled stop over the period, ordered by service date, trip_id and stop_sequence. Columns: ${TRIP_TRACKING_COLUMNS.join(';')}. ` +
            'Times are ISO 8601 local times with their UTC offset; boardings and alightings summed over doors and categories.',
          `Period: at most ${MAX_TRACKING_DAYS} days. Streamed with flat memory.`,
          DEFINITIONS,
        ].join('\n\n'),
      },
      { params: GroupParams, querystring: Type.Object({ ...PeriodQuery }), response: { 200: CsvResponse } },
    ),
  }, async (req, reply) => {
    const scope = req.groupScope!;
    const tz = await timezoneOf(ctx.db, scope.groupId);
    const p = period(req.query.start_date, req.query.end_date, tz, MAX_TRACKING_DAYS);
    return sendCsv(reply, `trip-tracking_${p.start}_${p.end}.csv`, TRIP_TRACKING_COLUMNS, exportTripTracking(ctx.db, scope, p, tz, ctx.clock.now()));
  });
}
