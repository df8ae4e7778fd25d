/**
 * Device report ingestion: one batch, one transaction. Each item is checked against its own
 * schema first; a bad item is rejected alone with its reasons and the good ones are stored.
 * Retried items are recognised by (group, device, client id) and acknowledged as duplicates.
 * Items may arrive late and out of order: duties are re-derived from the sign events in event
 * time, and the latest-state view only moves forward in event time.
 */
import { Compile } from 'typebox/compile';
import type { AppContext } from '../../platform/context.js';
import type { AnnouncedTable } from '../../platform/db/changes.js';
import type { Queryable, Tx } from '../../platform/db/index.js';
import { PARTITIONS_AHEAD_DAYS, type PartitionedTable } from '../../platform/db/partitions.js';
import { FORMAT_HINTS } from '../../platform/http/params.js';
import { objectId } from '../../platform/ids.js';
import { gtfsSeconds } from '../gtfs/time.js';
import { appendHistory, stateBoundErrors, type HistoryEventInput } from './history.js';
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

/** Seconds since the start of the service day, from HH:MM:SS (may pass 24:00:00). */
const secondsOf = (hms: string | undefined): number | null => (hms === undefined ? null : gtfsSeconds(hms));

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

export interface IngestResult {
  answer: BatchAnswer;
  /** Trips whose recorded side changed, for tracking. */
  touchedTrips: { trip_id: string; service_date: string }[];
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
  const touched = new Map<string, { trip_id: string; service_date: string }>();
  const touch = (trip_id: string | undefined, service_date: string | undefined) => {
    if (trip_id && service_date) touched.set(`${service_date} ${trip_id}`, { trip_id, service_date });
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
  await ctx.services.partitions.ensure([...partitionsOf('positions', reports.positions), ...partitionsOf('trip_events', reports.events), ...partitionsOf('passenger_counts', reports.counts)]);

  let duties: { client_id: string; duty_id: string }[] = [];
  if (ons.length + offs.length + states.length === 0) {
    // The common batch (trip events, positions, counts…): one statement, atomic by itself.
    for (const id of await insertReports(ctx.db, groupId, deviceId, reports, receivedAt)) accepted.add(id);
  } else {
    duties = await ctx.db.transaction(async (tx) => {
      const add = (ids: Iterable<string>) => {
        for (const id of ids) accepted.add(id);
      };
      const signs = await insertSignEvents(tx, groupId, deviceId, ons, offs, receivedAt);
      add(signs.map((s) => s.client_id));
      if (signs.length > 0) await deriveDuties(tx, groupId, deviceId, Math.min(...signs.map((s) => s.at.getTime())));
      add(await insertReports(tx, groupId, deviceId, reports, receivedAt));

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
      return ids.length === 0
        ? []
        : tx.query<{ client_id: string; duty_id: string }>('SELECT client_id, duty_id FROM device_sign_events WHERE group_id = $1 AND device_id = $2 AND client_id = ANY($3::uuid[])', [groupId, deviceId, ids]);
    });
  }
  // The caches that read report tables learn of them (they have no trigger: changes.ts).
  if (accepted.size > 0) {
    ctx.db.changes.announce(ons.length + offs.length + states.length === 0 ? REPORTS_WRITE : [...REPORTS_WRITE, 'device_sign_events', 'device_history_events', 'device_history_snapshots']);
  }
  // Tracking of the trips these reports touch (marked dirty by insertReports) is recomputed after
  // commit (trips/tracking.ts).
  for (const t of ['trip_event', 'position', 'passenger_count', 'trip_start', 'trip_end'] as const) {
    for (const v of of<{ trip_id?: string; service_date?: string }>(t)) if (accepted.has(v.item.id)) touch(v.item.trip_id, v.item.service_date);
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

const iso = (d: Date) => d.toISOString();
const nul = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

interface StoredSign {
  client_id: string;
  kind: 'sign_on' | 'sign_off';
  at: Date;
  duty_id: string | null;
  driver_id: string | null;
  vehicle_id: string | null;
}

async function insertSignEvents(tx: Tx, g: string, d: string, ons: (Valid & { item: SignOn })[], offs: (Valid & { item: SignOff })[], receivedAt: Date): Promise<StoredSign[]> {
  const all = [...ons, ...offs];
  if (all.length === 0) return [];
  return tx.query<StoredSign>(
    `INSERT INTO device_sign_events (group_id, device_id, client_id, kind, at, duty_id, driver_id, vehicle_id, odometer_km, non_commercial_km, info, received_at)
     SELECT $1, $2, u.* , $12 FROM unnest($3::uuid[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::text[], $9::float8[], $10::float8[], $11::jsonb[])
       AS u(client_id, kind, at, duty_id, driver_id, vehicle_id, odometer_km, non_commercial_km, info)
     ON CONFLICT DO NOTHING RETURNING client_id, kind, at, duty_id, driver_id, vehicle_id`,
    [
      g, d,
      all.map((s) => s.item.id),
      all.map((s) => s.type),
      all.map((s) => iso(s.at)),
      all.map((s) => (s.type === 'sign_on' ? objectId(s.at.getTime()) : null)),
      all.map((s) => (s.type === 'sign_on' ? (s.item as SignOn).driver_id! : null)),
      all.map((s) => (s.type === 'sign_on' ? (s.item as SignOn).vehicle_id : null)),
      all.map((s) => nul(s.item.odometer_km)),
      all.map((s) => (s.type === 'sign_off' ? nul((s.item as SignOff).non_commercial_km) : null)),
      all.map((s) => JSON.stringify(s.item.info ?? {})),
      receivedAt,
    ],
  );
}

interface SignEventRow {
  client_id: string;
  kind: 'sign_on' | 'sign_off';
  at: Date;
  duty_id: string | null;
  driver_id: string | null;
  vehicle_id: string | null;
  odometer_km: number | null;
  non_commercial_km: number | null;
  info: Record<string, unknown>;
}

/**
 * Re-derives the device's duties from its sign events, from the last sign-on before `fromMs`:
 * each sign-on opens a duty, closed by the next sign-off (end_reason sign_off) or by the next
 * sign-on (next_sign_on), whatever order the events arrived in.
 */
async function deriveDuties(tx: Tx, g: string, d: string, fromMs: number) {
  const anchor = await tx.query<{ at: Date }>(
    "SELECT at FROM device_sign_events WHERE group_id = $1 AND device_id = $2 AND kind = 'sign_on' AND at < $3 ORDER BY at DESC LIMIT 1",
    [g, d, new Date(fromMs)],
  );
  const from = anchor[0]?.at ?? new Date(fromMs);
  const events = await tx.query<SignEventRow>(
    `SELECT client_id, kind, at, duty_id, driver_id, vehicle_id, odometer_km, non_commercial_km, info
     FROM device_sign_events WHERE group_id = $1 AND device_id = $2 AND at >= $3
     ORDER BY at, CASE kind WHEN 'sign_off' THEN 0 ELSE 1 END, client_id`,
    [g, d, from],
  );
  type Duty = { on: SignEventRow; off: SignEventRow | null; end: Date | null; reason: 'sign_off' | 'next_sign_on' | null };
  const duties: Duty[] = [];
  let open: Duty | null = null;
  for (const e of events) {
    if (e.kind === 'sign_on') {
      if (open) {
        open.end = e.at;
        open.reason = 'next_sign_on';
      }
      open = { on: e, off: null, end: null, reason: null };
      duties.push(open);
    } else if (open) {
      open.off = e;
      open.end = e.at;
      open.reason = 'sign_off';
      open = null;
    }
  }
  if (duties.length > 0) {
    const info = (e: SignEventRow) => JSON.stringify({ id: e.client_id, at: e.at.toISOString(), odometer_km: e.odometer_km, info: e.info });
    await tx.query(
      `INSERT INTO duties (group_id, duty_id, device_id, driver_id, vehicle_id, signed_on_at, signed_off_at, end_reason, sign_on, sign_off, non_commercial_km)
       SELECT $1, u.duty_id, $2, u.driver_id, u.vehicle_id, u.signed_on_at, u.signed_off_at, u.end_reason, u.sign_on, u.sign_off, u.non_commercial_km
       FROM unnest($3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::text[], $9::jsonb[], $10::jsonb[], $11::float8[])
         AS u(duty_id, driver_id, vehicle_id, signed_on_at, signed_off_at, end_reason, sign_on, sign_off, non_commercial_km)
       ON CONFLICT (group_id, duty_id) DO UPDATE SET
         signed_off_at = EXCLUDED.signed_off_at, end_reason = EXCLUDED.end_reason,
         sign_off = EXCLUDED.sign_off, non_commercial_km = EXCLUDED.non_commercial_km`,
      [
        g, d,
        duties.map((x) => x.on.duty_id), duties.map((x) => x.on.driver_id), duties.map((x) => x.on.vehicle_id),
        duties.map((x) => iso(x.on.at)), duties.map((x) => (x.end ? iso(x.end) : null)), duties.map((x) => x.reason),
        duties.map((x) => info(x.on)), duties.map((x) => (x.off ? info(x.off) : null)), duties.map((x) => x.off?.non_commercial_km ?? null),
      ],
    );
  }
}

/** The tables insertReports writes. */
const REPORTS_WRITE: AnnouncedTable[] = ['positions', 'trip_events', 'passenger_counts', 'trip_runs', 'vehicle_movements', 'device_latest', 'trip_tracking_dirty'];

interface ReportItems {
  runs: (Valid & { item: TripStart | TripEnd })[];
  events: (Valid & { item: TripEvent })[];
  positions: (Valid & { item: Position })[];
  counts: (Valid & { item: PassengerCount })[];
  movements: (Valid & { item: VehicleMovement })[];
}

const LATEST_POSITION = ['position_at', 'lat', 'lon', 'gps_valid', 'speed_kmh', 'bearing', 'trip_id', 'service_date', 'start_time'] as const;
const NEWER_POSITION = 'EXCLUDED.position_at IS NOT NULL AND (l.position_at IS NULL OR l.position_at < EXCLUDED.position_at)';

/**
 * Every report of a batch but sign events and device states, in ONE statement (a batch costs one
 * round trip): each kind is inserted with ON CONFLICT DO NOTHING on its client id (a retried item
 * is not stored twice); the rows actually inserted then move the device's latest state (only
 * forward in event time; last_seen_at always) and mark their trips for the tracking (the marks
 * carry the database clock, see trips/tracking.ts). Returns the client ids stored now.
 */
const INSERT_REPORTS = `WITH
tr AS (
  INSERT INTO trip_runs (group_id, device_id, client_id, kind, at, trip_id, service_date, start_time, block_id, received_at)
  SELECT $1, $2, u.*, $3 FROM json_to_recordset($4::json)
    AS u(client_id uuid, kind text, at timestamptz, trip_id text, service_date date, start_time int, block_id text)
  ON CONFLICT DO NOTHING RETURNING client_id, trip_id, service_date),
te AS (
  INSERT INTO trip_events (group_id, device_id, client_id, at, event, trip_id, service_date, start_time, stop_id, stop_sequence, lat, lon, gps_valid, odometer_km, state, received_at)
  SELECT $1, $2, u.*, $3 FROM json_to_recordset($5::json)
    AS u(client_id uuid, at timestamptz, event text, trip_id text, service_date date, start_time int, stop_id text, stop_sequence int, lat float8, lon float8,
         gps_valid bool, odometer_km float8, state text)
  ON CONFLICT DO NOTHING RETURNING client_id, trip_id, service_date),
po AS (
  INSERT INTO positions (group_id, device_id, client_id, at, lat, lon, gps_valid, speed_kmh, bearing, accuracy_m, odometer_km, trip_id, service_date, start_time, received_at)
  SELECT $1, $2, u.*, $3 FROM json_to_recordset($6::json)
    AS u(client_id uuid, at timestamptz, lat float8, lon float8, gps_valid bool, speed_kmh real, bearing real, accuracy_m real, odometer_km float8, trip_id text,
         service_date date, start_time int)
  ON CONFLICT DO NOTHING RETURNING client_id, at, lat, lon, gps_valid, speed_kmh, bearing, trip_id, service_date, start_time),
pc AS (
  INSERT INTO passenger_counts (group_id, device_id, client_id, category, at, trip_id, service_date, start_time, stop_id, stop_sequence, door, boardings, alightings, received_at)
  SELECT $1, $2, u.*, $3 FROM json_to_recordset($7::json)
    AS u(client_id uuid, category text, at timestamptz, trip_id text, service_date date, start_time int, stop_id text, stop_sequence int, door int, boardings int, alightings int)
  ON CONFLICT DO NOTHING RETURNING client_id, trip_id, service_date),
vm AS (
  INSERT INTO vehicle_movements (group_id, vehicle_movement_id, device_id, client_id, block_id, service_date, kind, origin, destination, started_at, ended_at, distance_km, received_at)
  SELECT $1, u.movement_id, $2, u.client_id, u.block_id, u.service_date, u.kind, u.origin, u.destination, u.started_at, u.ended_at, u.distance_km, $3
  FROM json_to_recordset($8::json)
    AS u(movement_id text, client_id uuid, block_id text, service_date date, kind text, origin jsonb, destination jsonb, started_at timestamptz, ended_at timestamptz, distance_km float8)
  ON CONFLICT DO NOTHING RETURNING client_id),
latest AS (
  INSERT INTO device_latest AS l (group_id, device_id, last_seen_at, ${LATEST_POSITION.join(', ')})
  SELECT $1, $2, $3, p.at, p.lat, p.lon, p.gps_valid, p.speed_kmh, p.bearing, p.trip_id, p.service_date, p.start_time
  FROM (SELECT 1) AS one LEFT JOIN (SELECT * FROM po ORDER BY at DESC LIMIT 1) AS p ON true
  ON CONFLICT (group_id, device_id) DO UPDATE SET last_seen_at = GREATEST(l.last_seen_at, EXCLUDED.last_seen_at),
  ${LATEST_POSITION.map((c) => `${c} = CASE WHEN ${NEWER_POSITION} THEN EXCLUDED.${c} ELSE l.${c} END`).join(', ')}),
dirty AS (
  INSERT INTO trip_tracking_dirty (group_id, service_date, trip_id, marked_at)
  SELECT $1, t.service_date, t.trip_id, clock_timestamp()
  FROM (SELECT service_date, trip_id FROM tr UNION SELECT service_date, trip_id FROM te UNION SELECT service_date, trip_id FROM po
        UNION SELECT service_date, trip_id FROM pc) AS t
  WHERE t.trip_id IS NOT NULL AND t.service_date IS NOT NULL
  ON CONFLICT (group_id, service_date, trip_id) DO UPDATE SET marked_at = GREATEST(trip_tracking_dirty.marked_at, clock_timestamp()))
SELECT client_id FROM tr UNION ALL SELECT client_id FROM te UNION ALL SELECT client_id FROM po
UNION ALL SELECT DISTINCT client_id FROM pc UNION ALL SELECT client_id FROM vm`;

async function insertReports(q: Queryable, g: string, d: string, r: ReportItems, receivedAt: Date): Promise<string[]> {
  // Each kind travels as one JSON array (json_to_recordset): PostgreSQL parses it in C, where
  // dozens of typed arrays cost the driver's escaping of every element.
  const json = (rows: object[]) => JSON.stringify(rows);
  const rows = await q.query<{ client_id: string }>(INSERT_REPORTS, [
    g, d, receivedAt,
    json(r.runs.map(({ type, at, item }) => ({
      client_id: item.id, kind: type === 'trip_start' ? 'start' : 'end', at: iso(at), trip_id: item.trip_id, service_date: item.service_date,
      start_time: secondsOf(item.start_time), block_id: (item as TripStart).block_id,
    }))),
    json(r.events.map(({ item: x }) => ({
      client_id: x.id, at: x.at, event: x.event, trip_id: x.trip_id, service_date: x.service_date, start_time: secondsOf(x.start_time), stop_id: x.stop_id,
      stop_sequence: x.stop_sequence, lat: x.lat, lon: x.lon, gps_valid: x.gps_valid, odometer_km: x.odometer_km, state: x.state,
    }))),
    json(r.positions.map(({ item: x }) => ({
      client_id: x.id, at: x.at, lat: x.lat, lon: x.lon, gps_valid: x.gps_valid, speed_kmh: x.speed_kmh, bearing: x.bearing, accuracy_m: x.accuracy_m,
      odometer_km: x.odometer_km, trip_id: x.trip_id, service_date: x.service_date, start_time: secondsOf(x.start_time),
    }))),
    // one row per passenger category
    json(r.counts.flatMap(({ item: x }) => x.counts.map((k) => ({
      client_id: x.id, category: k.category, at: x.at, trip_id: x.trip_id, service_date: x.service_date, start_time: secondsOf(x.start_time), stop_id: x.stop_id,
      stop_sequence: x.stop_sequence, door: x.door, boardings: k.boardings, alightings: k.alightings,
    })))),
    json(r.movements.map(({ item: x }) => ({
      movement_id: objectId(Date.parse(x.started_at)), client_id: x.id, block_id: x.block_id, service_date: x.service_date, kind: x.kind, origin: x.origin,
      destination: x.destination, started_at: x.started_at, ended_at: x.ended_at, distance_km: x.distance_km,
    }))),
  ]);
  return rows.map((x) => x.client_id);
}
