import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import * as fleet from '../helpers/fleet.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

let t: TestApp;
let g: string;
let admin: TestUser;
let north: string;
let bus: { id: string; license_plate: string };
let other: { id: string; license_plate: string };
let pat: { id: string; staff_number: string };
let sam: { id: string; staff_number: string };

beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  north = await newTeam(t, g);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  await importZip(t, g, minimalZip({
    'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id\nR1,WK,T1,Third,0,B1\nR1,WK,T2,Third,0,B1\nR1,WK,F1,Third,0,B2\n',
    'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,08:00:00,08:00:00,S1,1\nT1,08:20:00,08:20:00,S3,2\nT2,09:00:00,09:00:00,S1,1\nT2,09:20:00,09:20:00,S3,2\nF1,06:00:00,06:00:00,S1,1\nF1,06:15:00,06:15:00,S3,2\n',
    'frequencies.txt': 'trip_id,start_time,end_time,headway_secs\nF1,06:00:00,07:00:00,1800\n',
  }), { publish: true });
  bus = await fleet.newVehicle(t, g, { license_plate: 'AB-123-CD', teams: [north] });
  other = await fleet.newVehicle(t, g, { license_plate: 'EF-456-GH' });
  pat = await fleet.newDriver(t, g, { staff_number: 'P100', teams: [north] });
  sam = await fleet.newDriver(t, g, { staff_number: 'S200' });
});
afterAll(async () => t?.close());

const put = (payload: unknown, query = '', headers: Record<string, string> = admin.auth) =>
  inject(t, { method: 'PUT', url: `/api/v4/groups/${g}/planning${query}`, headers: typeof payload === 'string' ? { ...headers, 'content-type': 'text/csv' } : headers, payload: payload as object });
const get = (query: string, user: TestUser) => inject(t, { url: `/api/v4/groups/${g}/planning?${query}`, headers: user.auth });

describe('planning', () => {
  it('resolves vehicles by license plate and drivers by staff number, and answers comparable records', async () => {
    const r = await put([
      { trip_id: 'T1', date: '20260310', license_plate: 'AB-123-CD', staff_number: 'P100' },
      { trip_id: 'T2', date: '20260310', vehicle_id: other.id },
    ], '?filename=week11.json');
    expect(r.status, r.body).toBe(200);
    expect(r.json).toHaveLength(2);
    expect(r.json[0]).toMatchObject({
      trip_id: 'T1', date: '20260310', service_date: '2026-03-10', start_time: '08:00:00', end_time: '08:20:00',
      departure_at: '2026-03-10T07:00:00.000Z', route_id: 'R1', route_short_name: '1', block_id: 'B1', first_stop_id: 'S1', last_stop_id: 'S3',
      vehicle_id: bus.id, license_plate: 'AB-123-CD', driver_id: pat.id, staff_number: 'P100', filename: 'week11.json',
    });
    expect(r.json[1]).toMatchObject({ trip_id: 'T2', vehicle_id: other.id, driver_id: null });
    const stored = await t.db.query('SELECT trip_id, vehicle_id, driver_id FROM plannings WHERE group_id = $1 ORDER BY trip_id', [g]);
    expect(stored).toEqual([{ trip_id: 'T1', vehicle_id: bus.id, driver_id: pat.id }, { trip_id: 'T2', vehicle_id: other.id, driver_id: null }]);
  });

  it('refuses redundant identifiers that disagree, naming the assignment, and applies nothing', async () => {
    const r = await put([
      { trip_id: 'T1', date: '20260311', vehicle_id: bus.id, staff_number: 'S200' },
      { trip_id: 'T2', date: '20260311', vehicle_id: bus.id, license_plate: 'EF-456-GH' },
      { trip_id: 'T2', date: '20260312', driver_id: sam.id, staff_number: 'P100' },
    ]);
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: any) => d.loc)).toEqual([['body', 1, 'license_plate'], ['body', 2, 'staff_number']]);
    expect(r.json.detail[0].msg).toContain(`is vehicle ${other.id}'s, not vehicle ${bus.id}'s`);
    expect(await t.db.query("SELECT 1 FROM plannings WHERE group_id = $1 AND service_date = '2026-03-11'", [g])).toEqual([]);
  });

  it('refuses a trip that does not run on the date, unknown resources, and empty assignments', async () => {
    const r = await put([
      { trip_id: 'T1', date: '20260314', vehicle_id: bus.id },
      { trip_id: 'NOPE', date: '20260310', vehicle_id: bus.id },
      { trip_id: 'T1', date: '20260310', license_plate: 'ZZ-000-ZZ' },
      { trip_id: 'T1', date: '20260310' },
      { trip_id: 'F1', date: '20260310', vehicle_id: bus.id },
    ]);
    expect(r.json.detail.map((d: any) => d.loc)).toEqual([['body', 0, 'trip_id'], ['body', 1, 'trip_id'], ['body', 2, 'license_plate'], ['body', 3, 'vehicle_id'], ['body', 4, 'start_time']]);
    expect(r.json.detail[0].msg).toContain('does not run on 2026-03-14');
  });

  it('replaces the planning of a trip and date, and plans frequency instances by start time', async () => {
    await put([{ trip_id: 'T1', date: '20260310', staff_number: 'S200' }]);
    const f = await put([{ trip_id: 'F1', date: '20260310', start_time: '06:30:00', vehicle_id: other.id }]);
    expect(f.json[0]).toMatchObject({ start_time: '06:30:00', end_time: '06:45:00' });
    const day = await get('date=20260310', await newUser(t, { groupId: g, role: 'reader' }));
    expect(day.json.map((p: any) => [p.trip_id, p.start_time, p.vehicle_id, p.driver_id])).toEqual([
      ['F1', '06:30:00', other.id, null],
      ['T1', '08:00:00', null, sam.id],
      ['T2', '09:00:00', other.id, null],
    ]);
  });

  it('takes a CSV file with format=csv, naming lines on errors', async () => {
    const csv = 'trip_id;date;license_plate;staff_number\r\nT1;20260316;AB-123-CD;P100\r\nT2;20260316;;S200\r\n';
    const ok = await put(csv, '?format=csv&filename=monday.csv');
    expect(ok.status, ok.body).toBe(200);
    expect(ok.json.map((p: any) => [p.trip_id, p.vehicle_id, p.driver_id, p.filename])).toEqual([['T1', bus.id, pat.id, 'monday.csv'], ['T2', null, sam.id, 'monday.csv']]);
    const bad = await put('trip_id;date;license_plate\r\nT1;20260317;AB-123-CD\r\nT2;2026-03-17;AB-123-CD\r\nT2;20260317;NOPE\r\n', '?format=csv');
    expect(bad.json.detail.map((d: any) => d.loc)).toEqual([['body', 3, 'date']]);
    const unknown = await put('trip_id;date;license_plate\r\nT1;20260317;AB-123-CD\r\nT2;20260317;NOPE\r\n', '?format=csv');
    expect(unknown.json.detail.map((d: any) => d.loc)).toEqual([['body', 3, 'license_plate']]);
    const header = await put('trip;date\r\nT1;20260317\r\n', '?format=csv');
    expect(header.json.detail.map((d: any) => d.loc)).toEqual([['body', 1, 'trip_id'], ['body', 1, 'trip']]);
    const mismatch = await put([{ trip_id: 'T1', date: '20260317', vehicle_id: bus.id }], '?format=csv');
    expect(mismatch.json.detail[0].loc).toEqual(['query', 'format']);
  });

  it('shows a driver only their own assignments, and a team-limited user only their teams', async () => {
    await put([{ trip_id: 'T1', date: '20260318', vehicle_id: bus.id, driver_id: pat.id }, { trip_id: 'T2', date: '20260318', vehicle_id: other.id, driver_id: sam.id }]);
    const patUser = await newUser(t, { groupId: g, role: 'driver', driverId: pat.id });
    expect((await get('date=20260318', patUser)).json.map((p: any) => p.trip_id)).toEqual(['T1']);
    const unlinked = await newUser(t, { groupId: g, role: 'driver' });
    expect((await get('date=20260318', unlinked)).json).toEqual([]);
    const northReader = await newUser(t, { groupId: g, role: 'reader', teams: [north] });
    expect((await get('date=20260318', northReader)).json.map((p: any) => p.trip_id)).toEqual(['T1']);
    const reader = await newUser(t, { groupId: g, role: 'reader' });
    expect((await get(`date=20260318&vehicle_id=${other.id}`, reader)).json.map((p: any) => p.trip_id)).toEqual(['T2']);
    expect((await get(`date=20260318&driver_id=${pat.id}`, reader)).json.map((p: any) => p.trip_id)).toEqual(['T1']);
    expect((await put([{ trip_id: 'T1', date: '20260318', vehicle_id: bus.id }], '', reader.auth)).json.code).toBe('PutPlanningRoleRequired');
  });
});
