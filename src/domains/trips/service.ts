/**
 * The trip object (spec: Resources, Trip) and the trips of a date: the schedule of a trip on a
 * service date, what was recorded (trips/tracking.ts), the trip updates that overlay it, and the
 * problems an operator must look at.
 */
import type { Db } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors } from '../../platform/http/errors.js';
import { forbiddenDifferentTeam, teamParam } from '../../platform/http/teams.js';
import { routesOf, tripShape, tripStopTimes, tripsOnServiceDate, type ScheduledTrip } from '../gtfs/service-days.js';
import { emptyOverlay, type TripOverlay } from '../updates/overlay.js';
import { overlayKey, overlaysFor } from '../updates/service.js';
import { kilometres, trackingOf, tripStatus, type TrackedStop, type TripTracking } from './tracking.js';
import { predictTrips, type PredictionContext } from '../predictions/service.js';
import type { Trip, TripOfDay } from './schemas.js';
import { devicesByIds } from '../fleet/devices.js';
import { driversSeen, teamsOfDrivers } from '../fleet/drivers.js';
import { teamsOfVehicles, vehiclesByIdOrPlate } from '../fleet/vehicles.js';
import { tripRuns } from '../device/trip-runs.js';
import { versionSummary } from '../gtfs/version-summary.js';
import { tripAssignments } from '../planning/trip-assignments.js';

/** A trip whose unreliable km exceed this share of vk has the gps_unreliable problem. */
export const GPS_UNRELIABLE_SHARE = 0.2;

/** What the caller may see: a trip belongs to the teams of its recorded (else planned) vehicles and drivers. */
async function teamsOfTrip(db: Db, groupId: string, vehicleIds: string[], driverIds: string[]): Promise<string[] | null> {
  if (vehicleIds.length === 0 && driverIds.length === 0) return null;
  const rows = [...await vehiclesByIdOrPlate(db, groupId, vehicleIds), ...await driversSeen(db, groupId, driverIds, null)];
  return [...new Set(rows.flatMap((r) => r.teams))];
}

function formattedName(route: { short_name: string | null; long_name: string | null } | undefined, trip: { headsign: string | null; start_time: string }): string {
  const line = route?.short_name ?? route?.long_name ?? '';
  return [line, trip.headsign ? `→ ${trip.headsign}` : null, trip.start_time.slice(0, 5)].filter((x) => x).join(' ');
}

function updatesOf(o: TripOverlay) {
  return {
    cancelled: o.cancelled,
    skipped_stops: [...o.skipped].map(([stop_sequence, update_id]) => ({ stop_sequence, update_id })),
    moved_stops: [...o.moved].map(([stop_sequence, m]) => ({ stop_sequence, update_id: m.update_id, place: m.place })),
    added_stops: o.added,
    detour: o.detour,
    messages: o.messages,
    applied: o.applied.map((u) => ({ update_id: u.update_id, kind: u.kind, is_detour: u.is_detour, start_date: u.start_date, end_date: u.end_date })),
  };
}

/**
 * The stop list with `merge`: the scheduled calls with their tracking, plus, when merging, the
 * overlay's added stops in place (status `added`) and the replacement place of moved stops.
 */
function stopList(stops: TrackedStop[], o: TripOverlay, merge: boolean): Trip['delay'] {
  if (!merge) return stops;
  const out: Trip['delay'] = [];
  for (const s of stops) {
    const moved = o.moved.get(s.stop_sequence);
    out.push(moved ? { ...s, moved_to: moved.place } : s);
    for (const a of o.added.filter((x) => x.after_stop_sequence === s.stop_sequence)) {
      out.push({ stop_id: a.place.stop_id ?? null, stop_sequence: null, stop_name: a.place.name ?? null, place: a.place, status: 'added', update_id: a.update_id, scheduled_at: null, actual_at: null, delay_seconds: null });
    }
  }
  return out;
}

export interface GetTripInput {
  tripId: string;
  serviceDate: string;
  merge: boolean;
  now: Date;
  /** The settings of the predictions shown for a trip in progress (docs/predictions.md). */
  predictions: PredictionContext['config']['predictions'];
}

/** GET /groups/{g}/trips/{trip_id}: 404 TripNotFound, 403 ForbiddenDifferentTeam. */
export async function getTrip(db: Db, scope: Pick<GroupScope, 'groupId' | 'teams'>, input: GetTripInput): Promise<Trip> {
  const groupId = scope.groupId;
  const { tripId, serviceDate } = input;
  // The reads that do not depend on one another run together (each waits behind the others' load, not after them).
  const [day, [tracking], planned, runs] = await Promise.all([
    tripsOnServiceDate(db, groupId, serviceDate, { tripIds: [tripId] }),
    trackingOf(db, groupId, serviceDate, [tripId], { now: input.now }),
    tripAssignments(db, groupId, serviceDate, tripId),
    tripRuns(db, groupId, serviceDate, tripId),
  ]);
  if (!tracking) throw errors.notFound('TripNotFound', `The trip ${tripId} neither runs nor was recorded on ${serviceDate}`);
  const trip: ScheduledTrip | undefined = day.trips.find((t) => t.start_time === tracking.start_time) ?? day.trips[0];

  const plannedVehicles = [...new Set(planned.flatMap((p) => (p.vehicle_id ? [p.vehicle_id] : [])))];
  const plannedDrivers = [...new Set(planned.flatMap((p) => (p.driver_id ? [p.driver_id] : [])))];

  if (scope.teams !== null) {
    const recordedSide = tracking.vehicle_ids.length + tracking.driver_ids.length > 0;
    const teams = await teamsOfTrip(db, groupId, recordedSide ? tracking.vehicle_ids : plannedVehicles, recordedSide ? tracking.driver_ids : plannedDrivers);
    if (teams !== null && !teams.some((t) => scope.teams!.includes(t))) throw forbiddenDifferentTeam(`The trip ${tripId} on ${serviceDate}`);
  }

  // A trip the caller sees may have been run with vehicles, drivers or devices of other teams: named by id only, details null.
  const teams = teamParam(scope);
  const seen = (recordTeams: readonly (string | null)[]) => teams === null || recordTeams.some((t) => t !== null && teams.includes(t));
  const [[route], overlays, predicted, vehicles, drivers, devices, gtfs] = await Promise.all([
    trip && day.gtfsId ? routesOf(db, groupId, day.gtfsId, [trip.route_id]) : [],
    trip ? overlaysFor(db, groupId, serviceDate, [{ trip_id: trip.trip_id, route_id: trip.route_id, start_time: trip.start_time }]) : new Map<string, TripOverlay>(),
    tracking.status === 'in_progress'
      ? predictTrips({ db, clock: { now: () => input.now }, config: { predictions: input.predictions } }, groupId, serviceDate, { tripIds: [tripId], tracking: [tracking] })
      : [],
    vehiclesByIdOrPlate(db, groupId, tracking.vehicle_ids).then((rows) => rows.map((v): Trip['vehicles'][number] => {
      const s = seen(v.teams);
      return { id: v.vehicle_id, fleet_number: s ? v.fleet_number : null, license_plate: s ? v.license_plate : null, teams: s ? v.teams : null };
    })),
    driversSeen(db, groupId, tracking.driver_ids, null).then((rows) => rows.map((d): Trip['drivers'][number] => {
      const s = seen(d.teams);
      return { id: d.driver_id, driver_name: s ? d.driver_name : null, staff_number: s ? d.staff_number : null, teams: s ? d.teams : null };
    })),
    devicesByIds(db, groupId, tracking.device_ids).then((rows) => rows.map((d): Trip['devices'][number] => ({ id: d.device_id, label: seen([d.team_id]) ? d.label : null }))),
    day.gtfsId
      ? versionSummary(db, groupId, day.gtfsId)
      : Promise.resolve([]),
  ]);
  const overlay = (trip && overlays.get(overlayKey(trip))) || emptyOverlay();

  // Planned kilometres of a trip with nothing recorded (tracking computes them for recorded ones).
  let tk = tracking.km.tk;
  if (tk === null && trip && day.gtfsId) {
    const shape = trip.shape_id ? await tripShape(db, groupId, day.gtfsId, trip.shape_id) : [];
    const line = shape.length >= 2 ? shape.map((p) => [p.lon, p.lat] as [number, number]) : tracking.stops.length ? await stopLine(db, groupId, serviceDate, tripId) : [];
    tk = kilometres(line, []).tk;
  }

  const byOrder = <T extends { id: string }>(rows: T[], ids: string[]) => ids.flatMap((id) => rows.filter((r) => r.id === id));

  // Recorded runs: each trip_start of a device, closed by its next trip_end (a vehicle swap gives two).
  const recordedRuns: { device_id: string; started_at: string; ended_at: string | null }[] = [];
  for (const r of runs) {
    if (r.kind === 'start') recordedRuns.push({ device_id: r.device_id, started_at: r.at.toISOString(), ended_at: null });
    else {
      const open = [...recordedRuns].reverse().find((x) => x.device_id === r.device_id && x.ended_at === null);
      if (open) open.ended_at = r.at.toISOString();
    }
  }

  const problems = problemsOf(tracking, overlay, plannedVehicles, plannedDrivers);
  const now = input.now.getTime();
  const temporality = tracking.status === 'in_progress' ? 'current'
    : trip && now < trip.first_departure_at.getTime() && !tracking.recorded ? 'future'
    : trip && now <= trip.last_arrival_at.getTime() && tracking.status !== 'completed' && tracking.status !== 'partial' ? 'current' : 'past';

  return {
    id: tripId,
    service_date: serviceDate,
    start_time: tracking.start_time,
    departure_time: trip?.first_departure_at.toISOString() ?? tracking.stops[0]?.scheduled_at ?? null,
    arrival_time: trip?.last_arrival_at.toISOString() ?? tracking.stops[tracking.stops.length - 1]?.scheduled_at ?? null,
    formatted_name: trip ? formattedName(route, trip) : tripId,
    headsign: trip?.headsign ?? null,
    direction_id: trip?.direction_id ?? null,
    block_id: trip?.block_id ?? null,
    temporality,
    status: tracking.status,
    route: route
      ? { id: route.route_id, color: route.color, long_name: route.long_name, short_name: route.short_name, text_color: route.text_color }
      : { id: tracking.route_id, color: null, long_name: null, short_name: null, text_color: null },
    first_stop: trip ? { id: trip.first_stop_id, name: tracking.stops[0]?.stop_name ?? null, stop_sequence: trip.first_stop_sequence } : null,
    last_stop: trip ? { id: trip.last_stop_id, name: tracking.stops[tracking.stops.length - 1]?.stop_name ?? null, stop_sequence: trip.last_stop_sequence } : null,
    passenger_count: { boardings: tracking.passengers.boardings, alightings: tracking.passengers.alightings, loading: tracking.passengers.max_load },
    tk,
    vk: tracking.km.vk,
    percent_km: tracking.recorded ? tracking.km.percent_km : 0,
    off_itinerary_km: tracking.km.off_itinerary_km,
    recorded_commercial_km: tracking.km.recorded_commercial_km,
    unreliable_km: tracking.km.unreliable_km,
    reliable_km: tracking.km.reliable_km,
    current_delay_seconds: tracking.delay_seconds,
    delay: stopList(tracking.stops, overlay, input.merge),
    vehicles: byOrder(vehicles, tracking.vehicle_ids),
    drivers: byOrder(drivers, tracking.driver_ids),
    devices: byOrder(devices, tracking.device_ids),
    trips: recordedRuns,
    gtfs: gtfs.map((v) => ({ id: v.id, name: v.name, publication_date: v.publication_date?.toISOString() ?? null })),
    updates: updatesOf(overlay),
    problems,
    service: { recorded_stops: tracking.recorded_stops, planned_stops: tracking.planned_stops },
    planned: { vehicle_ids: plannedVehicles, driver_ids: plannedDrivers },
    predictions: (predicted.find((p) => p.trip_id === tripId)?.stops ?? []).map((s) => ({
      stop_id: s.stop_id, stop_sequence: s.stop_sequence, arrival_at: s.arrival_at.toISOString(), departure_at: s.departure_at.toISOString(),
      uncertainty_seconds: s.uncertainty_seconds, basis: s.basis,
    })),
  };
}

async function stopLine(db: Db, groupId: string, serviceDate: string, tripId: string): Promise<[number, number][]> {
  const stops = await tripStopTimes(db, groupId, serviceDate, tripId);
  return stops.filter((s) => s.stop_lat !== null && s.stop_lon !== null).map((s) => [s.stop_lon!, s.stop_lat!]);
}

/**
 * The problems of a trip, by code (an empty object: nothing to look at). Planning is compared per
 * trip only (spec: What the service does 4).
 */
export function problemsOf(t: TripTracking, o: TripOverlay, plannedVehicles: string[], plannedDrivers: string[]): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  if (!t.recorded && (t.status === 'not_done' || (plannedVehicles.length + plannedDrivers.length > 0 && t.status !== 'scheduled' && t.status !== 'cancelled'))) {
    p['no_sign_on'] = { planned_vehicle_ids: plannedVehicles, planned_driver_ids: plannedDrivers };
  }
  if (t.recorded) {
    const otherVehicles = t.vehicle_ids.filter((v) => !plannedVehicles.includes(v));
    if (plannedVehicles.length > 0 && otherVehicles.length > 0) p['different_vehicle'] = { planned: plannedVehicles, recorded: t.vehicle_ids };
    const otherDrivers = t.driver_ids.filter((d) => !plannedDrivers.includes(d));
    if (plannedDrivers.length > 0 && otherDrivers.length > 0) p['different_driver'] = { planned: plannedDrivers, recorded: t.driver_ids };
    if (t.vehicle_ids.length > 1) p['vehicle_change'] = { vehicle_ids: t.vehicle_ids };
  }
  const missed = t.stops.filter((s) => s.status === 'missed');
  if (missed.length > 0) p['missing_stops'] = { stops: missed.map((s) => ({ stop_id: s.stop_id, stop_sequence: s.stop_sequence })) };
  if (t.recorded && t.km.vk > 0 && t.km.unreliable_km / t.km.vk > GPS_UNRELIABLE_SHARE) p['gps_unreliable'] = { unreliable_km: t.km.unreliable_km, vk: t.km.vk };
  if (t.km.off_itinerary_km > 0) p['off_itinerary'] = { off_itinerary_km: t.km.off_itinerary_km };
  if (o.cancelled && t.recorded) p['operated_while_cancelled'] = { update_ids: o.applied.filter((u) => u.kind === 'cancel').map((u) => u.update_id) };
  return p;
}

/**
 * GET trips?date (deprecated): the trips of a date, each item `recorded` (something was recorded;
 * tracking summary) or `scheduled` (only the schedule). A caller limited to teams gets the
 * recorded trips of their teams, and no scheduled-only item.
 */
export async function listTripsOfDate(db: Db, scope: Pick<GroupScope, 'groupId' | 'teams'>, serviceDate: string, now: Date): Promise<TripOfDay[]> {
  const groupId = scope.groupId;
  const day = await tripsOnServiceDate(db, groupId, serviceDate);
  const recorded = new Map((await trackingOf(db, groupId, serviceDate, undefined, { now })).map((t) => [t.trip_id, t]));
  let visible: ((t: TripTracking) => boolean) = () => true;
  if (scope.teams !== null) {
    const ours = (teams: readonly string[]) => teams.some((t) => scope.teams!.includes(t));
    const mine = new Set([
      ...[...await teamsOfVehicles(db, groupId)].filter(([, teams]) => ours(teams)).map(([id]) => `v ${id}`),
      ...[...await teamsOfDrivers(db, groupId)].filter(([, teams]) => ours(teams)).map(([id]) => `d ${id}`),
    ]);
    visible = (t) => t.vehicle_ids.some((v) => mine.has(`v ${v}`)) || t.driver_ids.some((d) => mine.has(`d ${d}`));
  }
  const overlays = await overlaysFor(db, groupId, serviceDate, scope.teams === null ? day.trips.filter((t) => !recorded.has(t.trip_id)) : []);
  const items: TripOfDay[] = [];
  const seen = new Set<string>();
  const recordedItem = (t: TripTracking, s: ScheduledTrip | undefined): TripOfDay => ({
    kind: 'recorded', id: t.trip_id, service_date: serviceDate, start_time: t.start_time, route_id: t.route_id, headsign: s?.headsign ?? null,
    direction_id: s?.direction_id ?? null, block_id: s?.block_id ?? null, departure_time: s?.first_departure_at.toISOString() ?? null,
    arrival_time: s?.last_arrival_at.toISOString() ?? null, status: t.status, delay_seconds: t.delay_seconds, started_at: t.started_at, ended_at: t.ended_at,
    recorded_stops: t.recorded_stops, planned_stops: t.planned_stops, vehicle_ids: t.vehicle_ids, driver_ids: t.driver_ids, device_ids: t.device_ids,
  });
  for (const s of day.trips) {
    if (seen.has(s.trip_id)) continue;
    seen.add(s.trip_id);
    const t = recorded.get(s.trip_id);
    if (t) {
      if (visible(t)) items.push(recordedItem(t, s));
    } else if (scope.teams === null) {
      items.push({
        kind: 'scheduled', id: s.trip_id, service_date: serviceDate, start_time: s.start_time, route_id: s.route_id, headsign: s.headsign, direction_id: s.direction_id,
        block_id: s.block_id, departure_time: s.first_departure_at.toISOString(), arrival_time: s.last_arrival_at.toISOString(),
        status: tripStatus(null, overlays.get(overlayKey(s)) ?? emptyOverlay(), s.last_arrival_at, now), delay_seconds: null,
        started_at: null, ended_at: null, recorded_stops: 0, planned_stops: s.stop_count, vehicle_ids: [], driver_ids: [], device_ids: [],
      });
    }
  }
  for (const t of recorded.values()) if (!seen.has(t.trip_id) && visible(t)) items.push(recordedItem(t, undefined));
  return items;
}
