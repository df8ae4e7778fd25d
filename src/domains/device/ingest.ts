/**
 * Device report ingestion: one batch, stored atomically (one statement; one transaction when it
 * carries sign events or device states). Each item is checked against its own
 * schema first; a bad item is rejected alone with its reasons and the good ones are stored.
 * Retried items are recognised by (group, device, client id, item time: the report tables' keys) and
 * acknowledged as duplicates.
 * Items may arrive late and out of order: duties are re-derived from the sign events in event
 * time, and the latest-state view only moves forward in event time.
 */
import { Compile } from 'typebox/compile';
import type { AppContext } from '../../platform/context.js';
import type { AnnouncedTable } from '../../platform/db/changes.js';
import type { Tx } from '../../platform/db/index.js';
import { PARTITIONS_AHEAD_DAYS, type PartitionedTable } from '../../platform/db/partitions.js';
import { FORMAT_HINTS } from '../../platform/http/params.js';
import { objectId } from '../../platform/ids.js';
import { appendHistory, stateBoundErrors, type HistoryEventInput } from './history.js';
import { insertReports, type ReportItems } from './queries/reports.js';
import { insertSignEventRows, selectDutiesOfSignOns, selectSignEventsFrom, type StoredSign } from './queries/sign-events.js';
import {
  ITEM_SCHEMAS,
  ITEM_TYPES,
  type BatchAnswer,
  type DeviceState,
  type ItemType,
  type PassengerCount,
  type Position,
  type SignOff,
  type SignOn,
  type TripEnd,
  type TripEvent,
  type TripStart,
  type VehicleMovement,
} from './schemas.js';
import { driversByIdOrCode } from '../fleet/drivers.js';
import { vehiclesByIdOrPlate } from '../fleet/vehicles.js';

const validators = Object.fromEntries(ITEM_TYPES.map((t) => [t, Compile(ITEM_SCHEMAS[t])])) as Record<ItemType, ReturnType<typeof Compile>>;

interface Rejection {
  index: number;
  id: string | null;
  errors: { loc: (string | number)[]; msg: string }[];
}

interface Valid {
  index: number;
  type: ItemType;
  item: { id: string; at: string } & Record<string, unknown>;
  at: Date;
}


function check(raw: unknown, index: number): Valid | Rejection {
  const obj = raw as Record<string, unknown>;
  const id = typeof obj['id'] === 'string' ? obj['id'] : null;
  const type = obj['type'];
  if (typeof type !== 'string' || !(ITEM_TYPES as string[]).includes(type)) {
    return { index, id, errors: [{ loc: ['type'], msg: `type must be one of ${ITEM_TYPES.join(', ')}` }] };
  }
  const v = validators[type as ItemType];
  if (!v.Check(raw)) {
    const errors = [...v.Errors(raw)]
      .filter((e) => e.keyword !== 'boolean')
      .map((e) => {
        const loc = e.instancePath.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
        const extra = (e.params as { additionalProperties?: string[]; requiredProperties?: string[] });
        if (e.keyword === 'additionalProperties' && extra.additionalProperties) return { loc: [...loc, ...extra.additionalProperties.slice(0, 1)], msg: 'unknown field' };
        if (e.keyword === 'required' && extra.requiredProperties) return { loc: [...loc, ...extra.requiredProperties.slice(0, 1)], msg: 'required' };
        const format = (e.params as { format?: string }).format;
        if (e.keyword === 'format' && format && FORMAT_HINTS[format]) return { loc, msg: `must be a ${FORMAT_HINTS[format]}` };
        return { loc, msg: e.message };
      });
    return { index, id, errors };
  }
  const item = raw as Valid['item'];
  const semantic: { loc: string[]; msg: string }[] = [];
  if (type === 'sign_on') {
    const s = item as unknown as SignOn;
    if ((s.driver_id === undefined) === (s.driver_code === undefined)) semantic.push({ loc: ['driver_id'], msg: 'give exactly one of driver_id and driver_code' });
  }
  if (type === 'vehicle_movement') {
    const m = item as unknown as VehicleMovement;
    if (Date.parse(m.ended_at) < Date.parse(m.started_at)) semantic.push({ loc: ['ended_at'], msg: 'ended_at is before started_at' });
  }
  if (type === 'trip_event' || type === 'position') {
    const p = item as { lat?: number; lon?: number; trip_id?: string; service_date?: string };
    if ((p.lat === undefined) !== (p.lon === undefined)) semantic.push({ loc: ['lon'], msg: 'lat and lon go together' });
    if (type === 'position' && (p.trip_id === undefined) !== (p.service_date === undefined)) semantic.push({ loc: ['service_date'], msg: 'trip_id and service_date go together' });
  }
  if (semantic.length > 0) return { index, id, errors: semantic };
  return { index, type: type as ItemType, item, at: new Date(item.at) };
}

/** A trip a batch touched (the shape of trips/tracking.ts TripRef, which this domain does not import: trips reads device's reports). */
export interface TouchedTrip {
  trip_id: string;
  service_date: string;
  reported_at: number;
}

export interface IngestResult {
  answer: BatchAnswer;
  /** Trips whose recorded side changed, for tracking, each with its latest report in the batch (ms: trips/tracking.ts TripRef). */
  touchedTrips: TouchedTrip[];
}

export async function ingestBatch(ctx: AppContext, groupId: string, deviceId: string, raw: unknown[]): Promise<IngestResult> {
  const rejected: Rejection[] = [];
  const byType = new Map<ItemType, Valid[]>();
  const firstIndexOfId = new Map<string, number>();
  const inBatchDuplicates: string[] = [];
  raw.forEach((r, index) => {
    const c = check(r, index);
    if ('errors' in c) return void rejected.push(c);
    if (firstIndexOfId.has(c.item.id)) return void inBatchDuplicates.push(c.item.id);
    firstIndexOfId.set(c.item.id, index);
    (byType.get(c.type) ?? byType.set(c.type, []).get(c.type)!).push(c);
  });
  const of = <T>(t: ItemType) => (byType.get(t) ?? []) as unknown as (Valid & { item: T })[];

  // References of sign-ons: the driver (by id or code) and the vehicle must exist in the group.
  const signOns = of<SignOn>('sign_on');
  if (signOns.length > 0) {
    const resolved = await resolveSignOns(ctx, groupId, signOns.map((s) => s.item));
    const keep: typeof signOns = [];
    signOns.forEach((s, i) => {
      const r = resolved[i]!;
      if ('error' in r) rejected.push({ index: s.index, id: s.item.id, errors: [r.error] });
      else {
        s.item.driver_id = r.driverId;
        keep.push(s);
      }
    });
    byType.set('sign_on', keep as unknown as Valid[]);
  }

  // A state change that would take the device's state past its bounds is rejected alone (history.ts).
  const stateChanges = of<DeviceState>('device_state');
  if (stateChanges.length > 0) {
    const over = await stateBoundErrors(ctx.db, groupId, deviceId, stateChanges.map((s) => ({ clientId: s.item.id, at: s.at, patch: s.item.state as Record<string, unknown> })));
    stateChanges.forEach((s, i) => over[i] && rejected.push({ index: s.index, id: s.item.id, errors: [{ loc: ['state'], msg: over[i] }] }));
    byType.set('device_state', stateChanges.filter((_s, i) => !over[i]) as unknown as Valid[]);
  }

  // Trip reports outside the window the service keeps are rejected alone (reportWindowError).
  const now = ctx.clock.now().getTime();
  for (const t of TRIP_REPORTS) {
    const list = byType.get(t);
    if (!list) continue;
    byType.set(t, list.filter((v) => {
      const msg = reportWindowError(v.at.getTime(), now, ctx.config.partitions.positionsRetentionDays);
      if (msg) rejected.push({ index: v.index, id: v.item.id, errors: [{ loc: ['at'], msg }] });
      return !msg;
    }));
  }

  const receivedAt = ctx.clock.now();
  const accepted = new Set<string>();
  const touched = new Map<string, TouchedTrip>();
  // With the trip's latest report in the batch: the refresh after ingest takes the trips reported on most recently first.
  const touch = (trip_id: string | undefined, service_date: string | undefined, at: Date) => {
    if (!trip_id || !service_date) return;
    const key = `${service_date} ${trip_id}`;
    if ((touched.get(key)?.reported_at ?? -Infinity) < at.getTime()) touched.set(key, { trip_id, service_date, reported_at: at.getTime() });
  };

  const reports: ReportItems = {
    runs: [...of<TripStart>('trip_start'), ...of<TripEnd>('trip_end')],
    events: of<TripEvent>('trip_event'),
    positions: of<Position>('position'),
    counts: of<PassengerCount>('passenger_count'),
    movements: of<VehicleMovement>('vehicle_movement'),
  };
  const states = of<DeviceState>('device_state');
  const ons = of<SignOn>('sign_on');
  const offs = of<SignOff>('sign_off');

  // The partitions these reports go to exist before the batch's statement (a backlog of an older
  // day creates its own). An instant is also taken 1 ms later: the database rounds to the
  // microsecond a time the Date truncated to the millisecond, which may carry it past midnight.
  const partitionsOf = (table: PartitionedTable, items: Valid[]) => items.flatMap((v) => [{ table, at: v.at }, { table, at: new Date(v.at.getTime() + 1) }]);
  await ctx.services.partitions.ensure([...partitionsOf('positions', byType.get('position') ?? []), ...partitionsOf('trip_events', byType.get('trip_event') ?? []), ...partitionsOf('passenger_counts', byType.get('passenger_count') ?? [])]);

  const signsOrStates = ons.length + offs.length + states.length > 0;
  const touchAccepted = () => {
    for (const t of TRIP_REPORTS) {
      for (const v of of<{ trip_id?: string; service_date?: string }>(t)) if (accepted.has(v.item.id)) touch(v.item.trip_id, v.item.service_date, v.at);
    }
  };
  const add = (ids: Iterable<string>) => {
    for (const id of ids) accepted.add(id);
  };
  // Reports alone (nearly every batch) are one statement, atomic by itself: the reports and the
  // marks of the trips they touch (recomputed after commit: trips/tracking.ts). A batch held the
  // connection for BEGIN, two statements and COMMIT; under a fleet's waves of batches, reads
  // waited for those connections.
  if (!signsOrStates) {
    add(await insertReports(ctx.db, ctx.services.tracking.markTrips, groupId, deviceId, reports, receivedAt));
    touchAccepted();
  }
  // Else one transaction: the sign events and the duties derived from them, the reports (and
  // their marks), and the device's history.
  const duties = !signsOrStates ? [] : await ctx.db.transaction(async (tx) => {
    const signs = await insertSignEvents(tx, groupId, deviceId, ons, offs, receivedAt);
    add(signs.map((s) => s.client_id));
    // The device's duties, derived again from its sign events from the last sign-on before the earliest new one (duties/service.ts, through the app's services).
    if (signs.length > 0) await ctx.services.duties.derive(tx, groupId, deviceId, await selectSignEventsFrom(tx, groupId, deviceId, new Date(Math.min(...signs.map((s) => s.at.getTime())))));
    add(await insertReports(tx, ctx.services.tracking.markTrips, groupId, deviceId, reports, receivedAt));
    touchAccepted();

    // The device's history: its state changes, and who is signed on (sign events).
    const history: HistoryEventInput[] = [
      ...states.map((s) => ({ clientId: s.item.id, at: s.at, patch: s.item.state as Record<string, unknown> })),
      ...signs.map((e) => ({
        clientId: e.client_id,
        at: e.at,
        patch: e.kind === 'sign_on' ? { current_duty_id: e.duty_id, driver_id: e.driver_id, vehicle_id: e.vehicle_id } : { current_duty_id: null, driver_id: null, vehicle_id: null },
      })),
    ];
    add(await appendHistory(tx, groupId, deviceId, history, receivedAt));

    const ids = ons.map((s) => s.item.id);
    return ids.length === 0 ? [] : selectDutiesOfSignOns(tx, groupId, deviceId, ids);
  });
  // The caches that read report tables learn of them (they have no trigger: changes.ts).
  if (accepted.size > 0) {
    ctx.db.changes.announce(signsOrStates ? [...REPORTS_WRITE, 'device_sign_events', 'device_history_events', 'device_history_snapshots'] : REPORTS_WRITE);
  }

  const all = [...byType.values()].flat();
  const duplicates = [...all.filter((v) => !accepted.has(v.item.id)).map((v) => v.item.id), ...inBatchDuplicates];
  const answer: BatchAnswer = {
    accepted: all.filter((v) => accepted.has(v.item.id)).sort((a, b) => a.index - b.index).map((v) => v.item.id),
    duplicates,
    rejected: rejected.sort((a, b) => a.index - b.index),
    duties: duties.map((d) => ({ id: d.client_id, duty_id: d.duty_id })),
    complete: rejected.length === 0,
  };
  ctx.services.outbox.publish(groupId, deviceId, all.filter((v) => accepted.has(v.item.id)).map((v) => ({ type: v.type, item: v.item })));
  return { answer, touchedTrips: [...touched.values()] };
}

/** The reports a trip's tracking is computed from (they mark it for recomputation). */
const TRIP_REPORTS: readonly ItemType[] = ['trip_start', 'trip_end', 'trip_event', 'position', 'passenger_count'];
const DAY_MS = 86_400_000;

/**
 * Why a trip report's time is outside what the service keeps, or null. Older than the retention
 * of positions: the trip's positions are gone, and recomputing its tracking now would lose what
 * they gave (its stored tracking is final). More than PARTITIONS_AHEAD_DAYS ahead of the
 * service's clock: the device's clock is wrong (and no partition is made for it).
 */
function reportWindowError(atMs: number, nowMs: number, retentionDays: number): string | null {
  if (retentionDays > 0 && atMs < nowMs - retentionDays * DAY_MS) {
    return `at is older than the ${retentionDays} days positions are kept (POSITIONS_RETENTION_DAYS): the trip's tracking is final`;
  }
  if (atMs > nowMs + PARTITIONS_AHEAD_DAYS * DAY_MS) return `at is more than ${PARTITIONS_AHEAD_DAYS} days ahead of the service's clock`;
  return null;
}

type Resolution = { driverId: string } | { error: { loc: string[]; msg: string } };

async function resolveSignOns(ctx: AppContext, groupId: string, items: SignOn[]): Promise<Resolution[]> {
  const ids = items.flatMap((i) => (i.driver_id ? [i.driver_id] : []));
  const codes = items.flatMap((i) => (i.driver_code ? [i.driver_code] : []));
  const vehicleIds = items.map((i) => i.vehicle_id);
  const drivers = await driversByIdOrCode(ctx.db, groupId, ids, codes);
  const vehicles = await vehiclesByIdOrPlate(ctx.db, groupId, vehicleIds);
  return items.map((i): Resolution => {
    const driver = i.driver_id ? drivers.find((d) => d.driver_id === i.driver_id) : drivers.find((d) => d.code === i.driver_code);
    if (!driver) return { error: { loc: [i.driver_id ? 'driver_id' : 'driver_code'], msg: `no driver ${JSON.stringify(i.driver_id ?? i.driver_code)} in the group` } };
    if (driver.archived) return { error: { loc: [i.driver_id ? 'driver_id' : 'driver_code'], msg: 'the driver is archived' } };
    const vehicle = vehicles.find((v) => v.vehicle_id === i.vehicle_id);
    if (!vehicle) return { error: { loc: ['vehicle_id'], msg: `no vehicle ${JSON.stringify(i.vehicle_id)} in the group` } };
    if (vehicle.status === 'archived') return { error: { loc: ['vehicle_id'], msg: 'the vehicle is archived' } };
    return { driverId: driver.driver_id };
  });
}

const nul = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

async function insertSignEvents(tx: Tx, g: string, d: string, ons: (Valid & { item: SignOn })[], offs: (Valid & { item: SignOff })[], receivedAt: Date): Promise<StoredSign[]> {
  const all = [...ons, ...offs];
  if (all.length === 0) return [];
  return insertSignEventRows(tx, g, d, all.map((s) => ({
    client_id: s.item.id,
    kind: s.type as 'sign_on' | 'sign_off',
    at: s.at,
    duty_id: s.type === 'sign_on' ? objectId(s.at.getTime()) : null,
    driver_id: s.type === 'sign_on' ? (s.item as SignOn).driver_id! : null,
    vehicle_id: s.type === 'sign_on' ? (s.item as SignOn).vehicle_id : null,
    odometer_km: nul(s.item.odometer_km),
    non_commercial_km: s.type === 'sign_off' ? nul((s.item as SignOff).non_commercial_km) : null,
    info: s.item.info ?? {},
  })), receivedAt);
}

/** The tables a batch of reports writes (insertReports, and the tracking's marks). */
const REPORTS_WRITE: AnnouncedTable[] = ['positions', 'trip_events', 'passenger_counts', 'trip_runs', 'vehicle_movements', 'device_latest', 'trip_tracking_dirty'];

