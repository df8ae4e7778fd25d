/**
 * Vehicle movements outside commercial service (HLP), as devices report them. The vehicle and
 * driver of a movement are those of the duty open on its device when it started.
 */
import { Type, type Static } from 'typebox';
import type { Queryable } from '../../../platform/db/index.js';
import type { GroupScope } from '../../../platform/http/access.js';
import { errors } from '../../../platform/http/errors.js';
import { Nullable, isoDate } from '../../../platform/http/params.js';
import { period } from '../../../platform/time.js';
import { MOVEMENT_KINDS, Place } from '../schemas.js';
import { component, ref } from '../../../platform/http/components.js';
import { selectAnyMovement, selectMovement, selectMovementsOfDate, selectMovementsOfPeriod, type MovementRow } from '../queries/movements.js';

export const MAX_MOVEMENT_PERIOD_DAYS = 31;

const MovementPlace = component('MovementPlace', Type.Object(Place.properties, { additionalProperties: false, description: 'Where a movement starts or ends, as the device reported it: a stop, a depot, a position (lat/lon, WGS84 degrees) and a label, any of them.' }));
export const VehicleMovementRecord = component('VehicleMovement', Type.Object({
  vehicle_movement_id: Type.String({ description: 'The movement\'s identifier.' }),
  kind: Type.Unsafe<(typeof MOVEMENT_KINDS)[number]>({ type: 'string', enum: [...MOVEMENT_KINDS], description: 'to_trip_start, to_depot, from_depot, between_trips, dead_run' }),
  service_date: Type.String({ format: 'date' }),
  block_id: Nullable(Type.String({ description: 'The block (sequence of trips chained by one vehicle), when known' })),
  origin: ref(MovementPlace),
  destination: ref(MovementPlace),
  started_at: Type.String({ format: 'date-time' }),
  ended_at: Type.String({ format: 'date-time' }),
  distance_km: Nullable(Type.Number({ minimum: 0, description: 'Kilometres driven, as reported' })),
  device_id: Type.String({ description: 'The device that reported the movement.' }),
  duty_id: Nullable(Type.String({ description: 'The duty open on the device when the movement started.' })),
  vehicle_id: Nullable(Type.String({ description: 'The vehicle of that duty.' })),
  driver_id: Nullable(Type.String({ description: 'The driver of that duty.' })),
}, { additionalProperties: false, description: 'A movement of the vehicle outside commercial service (HLP): to the start of a trip, to or from the depot, between trips, a dead run.' }));
export type VehicleMovementRecord = Static<typeof VehicleMovementRecord>;

const record = (r: MovementRow): VehicleMovementRecord => ({ ...r, started_at: r.started_at.toISOString(), ended_at: r.ended_at.toISOString() });

const teamsOf = (scope: GroupScope) => (scope.teams === null ? null : [...scope.teams]);

export async function movementsOfDate(db: Queryable, scope: GroupScope, date: string, blockId?: string): Promise<VehicleMovementRecord[]> {
  const rows = await selectMovementsOfDate(db, scope.groupId, teamsOf(scope), isoDate(date), blockId ?? null);
  return rows.map(record);
}

export async function movementsOfPeriod(db: Queryable, scope: GroupScope, startDate: string, endDate: string): Promise<VehicleMovementRecord[]> {
  const p = period(startDate, endDate, scope.timezone, MAX_MOVEMENT_PERIOD_DAYS);
  const rows = await selectMovementsOfPeriod(db, scope.groupId, teamsOf(scope), p.start, p.end);
  return rows.map(record);
}

export async function getMovement(db: Queryable, scope: GroupScope, id: string): Promise<VehicleMovementRecord> {
  const movement = await selectMovement(db, scope.groupId, null, id);
  if (!movement) throw errors.notFound('VehicleMovementNotFound', `No vehicle movement ${JSON.stringify(id)} in the group`);
  const visible = await selectMovement(db, scope.groupId, teamsOf(scope), id);
  if (!visible) throw errors.forbidden('ForbiddenDifferentTeam', 'This movement was made by a vehicle and a driver of other teams');
  return record(movement);
}

/** Whether the group holds any movement at all: tells an empty day from a feature never fed. */
export async function anyMovement(db: Queryable, groupId: string): Promise<{ any: boolean }> {
  return { any: await selectAnyMovement(db, groupId) };
}
