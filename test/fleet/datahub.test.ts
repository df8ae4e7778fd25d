/** The datahub CSV files of drivers and vehicles: exports (column order, literals, team scope) and imports. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyLine } from '../../src/platform/db/types.js';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { getCsv, lines, newDriver, newVehicle, postCsv } from '../helpers/fleet.js';

let t: TestApp;
beforeAll(async () => {
  t = await setup();
});
afterAll(async () => t?.close());

const DRIVER_HEADER = 'id;driver_name;staff_number;teams;comment;archived;code';
const VEHICLE_HEADER = 'id;fleet_number;license_plate;teams;comment;status;capacity';
const hex = (n: number) => n.toString(16).padStart(24, '0');

/** A group with teams north and south, an admin, and awkward values in every text column. */
async function fleetGroup() {
  const g = await newGroup(t);
  await newTeam(t, g, 'north');
  await newTeam(t, g, 'south');
  const admin = await newUser(t, { groupId: g, role: 'admin' });
  const reader = await newUser(t, { groupId: g, role: 'reader' });
  await newDriver(t, g, { driver_id: hex(1), driver_name: 'Zoë Ångström', staff_number: 'P1', teams: ['north', 'south'], comment: 'semi; colon', code: 'C1' });
  await newDriver(t, g, { driver_id: hex(2), driver_name: 'Bob "the bus" Smith', staff_number: 'P2', archived: true });
  await newDriver(t, g, { driver_id: hex(3), driver_name: 'Cy', staff_number: '-7', teams: ['south'], comment: 'line one\nline two', code: '=1+1' });
  await newVehicle(t, g, { vehicle_id: 'bus-1', fleet_number: '101', license_plate: 'AB-101-CD', teams: ['north'], comment: 'ramp; "manual"', capacity: 90 });
  await newVehicle(t, g, { vehicle_id: 'bus-2', fleet_number: '102', license_plate: 'AB-102-CD', status: 'maintenance' });
  await newVehicle(t, g, { vehicle_id: 'bus-3', fleet_number: '103', license_plate: 'AB-103-CD', teams: ['south', 'north'], status: 'archived', capacity: 0, comment: '@home' });
  return { g, admin, reader };
}

const EXPECTED_DRIVERS = lines(
  DRIVER_HEADER,
  `${hex(1)};Zoë Ångström;P1;north,south;"semi; colon";False;C1`,
  `${hex(2)};"Bob ""the bus"" Smith";P2;;;True;`,
  `${hex(3)};Cy;'-7;south;"line one\nline two";False;'=1+1`,
);
const EXPECTED_VEHICLES = lines(
  VEHICLE_HEADER,
  'bus-1;101;AB-101-CD;north;"ramp; ""manual""";active;90',
  'bus-2;102;AB-102-CD;;;maintenance;',
  "bus-3;103;AB-103-CD;south,north;'@home;archived;0",
);

describe('exports', () => {
  it('GET export/drivers: the spec\'s columns in order, True/False, teams joined by a comma, RFC 4180 quoting, streamed UTF-8', async () => {
    const { g, reader } = await fleetGroup();
    const r = await getCsv(t, `/api/v4/groups/${g}/export/drivers`, reader.auth);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(r.headers['content-disposition']).toBe(`attachment; filename="drivers-${g}.csv"`);
    expect(r.headers['content-length']).toBeUndefined();
    expect(r.text).toBe(EXPECTED_DRIVERS);
    const inService = await getCsv(t, `/api/v4/groups/${g}/export/drivers?archived=false`, reader.auth);
    expect(inService.text.split('\r\n').filter(Boolean).map((l) => l.slice(0, 24))).toEqual(['id;driver_name;staff_num', hex(1), hex(3)]);
    const archived = await getCsv(t, `/api/v4/groups/${g}/export/drivers?archived=true`, reader.auth);
    expect(archived.text).toBe(lines(DRIVER_HEADER, `${hex(2)};"Bob ""the bus"" Smith";P2;;;True;`));
  });

  it('GET export/vehicles: the spec\'s columns in order, every status without a filter, statuses filters', async () => {
    const { g, reader } = await fleetGroup();
    const r = await getCsv(t, `/api/v4/groups/${g}/export/vehicles`, reader.auth);
    expect(r.status).toBe(200);
    expect(r.text).toBe(EXPECTED_VEHICLES);
    const some = await getCsv(t, `/api/v4/groups/${g}/export/vehicles?statuses=archived&statuses=maintenance`, reader.auth);
    expect(some.text.split('\r\n').filter(Boolean).map((l) => l.split(';')[0])).toEqual(['id', 'bus-2', 'bus-3']);
    expect((await getCsv(t, `/api/v4/groups/${g}/export/vehicles?statuses=sold`, reader.auth)).status).toBe(422);
  });

  it('a user limited to team north exports only north\'s drivers and vehicles', async () => {
    const { g } = await fleetGroup();
    const north = await newUser(t, { groupId: g, role: 'operator', teams: ['north'] });
    const drivers = await getCsv(t, `/api/v4/groups/${g}/export/drivers`, north.auth);
    expect(drivers.text.split('\r\n').filter(Boolean).map((l) => l.split(';')[0])).toEqual(['id', hex(1)]);
    const vehicles = await getCsv(t, `/api/v4/groups/${g}/export/vehicles`, north.auth);
    expect(vehicles.text.split('\r\n').filter(Boolean).map((l) => l.split(';')[0])).toEqual(['id', 'bus-1', 'bus-3']);
  });

  it('streams a large export in cursor batches, in id order', async () => {
    const g = await newGroup(t);
    const reader = await newUser(t, { groupId: g, role: 'reader' });
    const n = 12_345;
    async function* rows() {
      for (let i = 1; i <= n; i++) yield copyLine([g, hex(i), `Driver ${i}`, `S${i}`]);
    }
    await t.db.copyFrom('drivers', ['group_id', 'driver_id', 'driver_name', 'staff_number'], rows());
    const r = await getCsv(t, `/api/v4/groups/${g}/export/drivers`, reader.auth);
    const body = r.text.split('\r\n');
    expect(body).toHaveLength(n + 2);
    expect(body[1]).toBe(`${hex(1)};Driver 1;S1;;;False;`);
    expect(body[n]).toBe(`${hex(n)};Driver ${n};S${n};;;False;`);
    expect(body[n + 1]).toBe('');
  });
});

describe('imports', () => {
  it('export → import → export gives identical bytes, into another group and back into the same one', async () => {
    const { g, admin, reader } = await fleetGroup();
    const drivers = (await getCsv(t, `/api/v4/groups/${g}/export/drivers`, reader.auth)).text;
    const vehicles = (await getCsv(t, `/api/v4/groups/${g}/export/vehicles`, reader.auth)).text;
    expect(drivers).toBe(EXPECTED_DRIVERS);

    const g2 = await newGroup(t);
    await newTeam(t, g2, 'north');
    await newTeam(t, g2, 'south');
    const admin2 = await newUser(t, { groupId: g2, role: 'admin' });
    const reader2 = await newUser(t, { groupId: g2, role: 'reader' });
    const d = await postCsv(t, `/api/v4/groups/${g2}/import/drivers`, drivers, admin2.auth);
    expect(d.status, d.body).toBe(200);
    expect(d.json).toEqual({ lines: 3, created: 3, updated: 0, unchanged: 0 });
    const v = await postCsv(t, `/api/v4/groups/${g2}/import/vehicles`, vehicles, admin2.auth);
    expect(v.json).toEqual({ lines: 3, created: 3, updated: 0, unchanged: 0 });
    expect((await getCsv(t, `/api/v4/groups/${g2}/export/drivers`, reader2.auth)).text).toBe(drivers);
    expect((await getCsv(t, `/api/v4/groups/${g2}/export/vehicles`, reader2.auth)).text).toBe(vehicles);
    const stored = await t.db.query('SELECT driver_name, staff_number, teams, comment, archived, code FROM drivers WHERE group_id = $1 AND driver_id = $2', [g2, hex(3)]);
    expect(stored).toEqual([{ driver_name: 'Cy', staff_number: '-7', teams: ['south'], comment: 'line one\nline two', archived: false, code: '=1+1' }]);
    expect(await t.db.query('SELECT comment, capacity FROM vehicles WHERE group_id = $1 AND vehicle_id = $2', [g2, 'bus-2'])).toEqual([{ comment: null, capacity: null }]);

    const same = await postCsv(t, `/api/v4/groups/${g}/import/drivers`, drivers, admin.auth);
    expect(same.json).toEqual({ lines: 3, created: 0, updated: 0, unchanged: 3 });
    expect((await getCsv(t, `/api/v4/groups/${g}/export/drivers`, reader.auth)).text).toBe(drivers);
  });

  it('upserts by id: changed lines update, new lines create, and the counts say so', async () => {
    const { g, admin } = await fleetGroup();
    const file = lines(
      DRIVER_HEADER,
      `${hex(1)};Zoë Ångström;P1;north,south;"semi; colon";False;C1`,
      `${hex(2)};Bob Smith;P2;;back from leave;False;`,
      `${hex(9)};New Driver;P9;north;;False;N9`,
    );
    const r = await postCsv(t, `/api/v4/groups/${g}/import/drivers`, file, admin.auth);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ lines: 3, created: 1, updated: 1, unchanged: 1 });
    const rows = await t.db.query('SELECT driver_id, driver_name, comment, archived FROM drivers WHERE group_id = $1 ORDER BY driver_id', [g]);
    expect(rows).toEqual([
      { driver_id: hex(1), driver_name: 'Zoë Ångström', comment: 'semi; colon', archived: false },
      { driver_id: hex(2), driver_name: 'Bob Smith', comment: 'back from leave', archived: false },
      { driver_id: hex(3), driver_name: 'Cy', comment: 'line one\nline two', archived: false },
      { driver_id: hex(9), driver_name: 'New Driver', comment: null, archived: false },
    ]);
  });

  it('validates every line and rejects the whole file with the errors per line, applying nothing', async () => {
    const { g, admin, reader } = await fleetGroup();
    const before = (await getCsv(t, `/api/v4/groups/${g}/export/drivers`, reader.auth)).text;
    expect(before).toBe(EXPECTED_DRIVERS);
    const file = lines(
      DRIVER_HEADER,
      `${hex(1)};Renamed;P1;north;;False;`, // 2: fine on its own
      'xyz;Name;P20;;;False;', // 3: bad id
      `${hex(21)};;P21;;;False;`, // 4: driver_name missing
      `${hex(22)};N;P22;ghost;;maybe;`, // 5: unknown team, bad boolean
      `${hex(21)};N;P23;;;True;`, // 6: duplicate id of line 4
      `${hex(24)};N;P1;;;False;`, // 7: staff number of line 2
      `${hex(25)};N;P2;;;False;`, // 8: staff number of a stored driver the file does not change
    );
    const r = await postCsv(t, `/api/v4/groups/${g}/import/drivers`, file, admin.auth);
    expect(r.status).toBe(422);
    const problems = r.json.detail.map((d: any) => [d.loc[1], d.loc[2], d.type, d.input]);
    expect(problems).toEqual([
      [3, 'id', 'value_error', 'xyz'],
      [4, 'driver_name', 'missing', ''],
      [5, 'archived', 'bool_parsing', 'maybe'],
      [5, 'teams', 'value_error', 'ghost'],
      [6, 'id', 'duplicate', hex(21)],
      [7, 'staff_number', 'duplicate', 'P1'],
      [8, 'staff_number', 'duplicate', 'P2'],
    ]);
    for (const d of r.json.detail) {
      expect(d.loc[0]).toBe('body');
      expect(typeof d.msg).toBe('string');
    }
    expect(r.json.detail.find((d: any) => d.loc[1] === 8).msg).toContain(hex(2));
    expect((await getCsv(t, `/api/v4/groups/${g}/export/drivers`, reader.auth)).text).toBe(before);
    expect(await t.db.query('SELECT count(*)::int AS n FROM drivers WHERE group_id = $1', [g])).toEqual([{ n: 3 }]);
  });

  it('vehicle lines: required columns, status values, capacity', async () => {
    const { g, admin } = await fleetGroup();
    const file = lines(
      VEHICLE_HEADER,
      'bus-9;;AB-9;;;active;', // fleet_number missing
      'bus-10;110;AB-10;;;sold;12', // unknown status
      'bus-11;111;AB-11;;;active;many', // capacity not a number
      'bus-12;112;AB-12;;;active;-3', // capacity below 0
      'bus 13;113;AB-13;;;;', // bad id, status missing
    );
    const r = await postCsv(t, `/api/v4/groups/${g}/import/vehicles`, file, admin.auth);
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: any) => [d.loc[1], d.loc[2], d.type])).toEqual([
      [2, 'fleet_number', 'missing'],
      [3, 'status', 'enum'],
      [4, 'capacity', 'int_parsing'],
      [5, 'capacity', 'value_error'],
      [6, 'id', 'value_error'],
      [6, 'status', 'missing'],
    ]);
    expect(r.json.detail[1].msg).toBe('Input should be one of: active, maintenance, out_of_service, archived');
    expect(await t.db.query("SELECT count(*)::int AS n FROM vehicles WHERE group_id = $1 AND vehicle_id LIKE 'bus-1_'", [g])).toEqual([{ n: 0 }]);
  });

  it('refuses a file that is not in the export format: header, malformed CSV', async () => {
    const { g, admin } = await fleetGroup();
    const header = await postCsv(t, `/api/v4/groups/${g}/import/drivers`, lines('id;name;staff_number;teams;comment;archived;code', `${hex(5)};A;P5;;;False;`), admin.auth);
    expect(header.status).toBe(422);
    expect(header.json.detail[0]).toMatchObject({ loc: ['body', 1], input: 'id;name;staff_number;teams;comment;archived;code' });
    expect(header.json.detail[0].msg).toContain(DRIVER_HEADER);
    const commas = await postCsv(t, `/api/v4/groups/${g}/import/vehicles`, 'id,fleet_number,license_plate,teams,comment,status,capacity\r\n', admin.auth);
    expect(commas.json.detail[0].loc).toEqual(['body', 1]);
    const broken = await postCsv(t, `/api/v4/groups/${g}/import/drivers`, `${DRIVER_HEADER}\r\n${hex(5)};"unclosed;P5;;;False;\r\n`, admin.auth);
    expect(broken.status).toBe(422);
    expect(broken.json.detail[0].type).toBe('csv_invalid');
    const json = await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/import/drivers`, headers: admin.auth, payload: { id: 1 } });
    expect(json.status).toBe(422);
  });

  it('one file may swap staff numbers between two drivers', async () => {
    const { g, admin } = await fleetGroup();
    const file = lines(DRIVER_HEADER, `${hex(1)};Zoë Ångström;P2;north,south;"semi; colon";False;C1`, `${hex(2)};"Bob ""the bus"" Smith";P1;;;True;`);
    const r = await postCsv(t, `/api/v4/groups/${g}/import/drivers`, file, admin.auth);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ lines: 2, created: 0, updated: 2, unchanged: 0 });
    expect(await t.db.query('SELECT driver_id, staff_number FROM drivers WHERE group_id = $1 AND driver_id = ANY($2) ORDER BY driver_id', [g, [hex(1), hex(2)]])).toEqual([
      { driver_id: hex(1), staff_number: 'P2' },
      { driver_id: hex(2), staff_number: 'P1' },
    ]);
  });

  it('an admin limited to team north imports only north records and cannot overwrite another team\'s', async () => {
    const { g } = await fleetGroup();
    const north: TestUser = await newUser(t, { groupId: g, role: 'admin', teams: ['north'] });
    const file = lines(
      VEHICLE_HEADER,
      'bus-1;101;AB-101-CD;north;;active;90', // north: fine
      'bus-2;102;AB-102-CD;north;;active;', // stored without a team: not theirs
      'bus-7;107;AB-107-CD;south;;active;', // a south vehicle
      'bus-8;108;AB-108-CD;;;active;', // no team
    );
    const r = await postCsv(t, `/api/v4/groups/${g}/import/vehicles`, file, north.auth);
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: any) => [d.loc[1], d.loc[2], d.type])).toEqual([
      [3, 'id', 'forbidden_team'],
      [4, 'teams', 'forbidden_team'],
      [5, 'teams', 'forbidden_team'],
    ]);
    const ok = await postCsv(t, `/api/v4/groups/${g}/import/vehicles`, lines(VEHICLE_HEADER, 'bus-1;101;AB-101-CD;north;;active;91'), north.auth);
    expect(ok.json).toEqual({ lines: 1, created: 0, updated: 1, unchanged: 0 });
  });

  it('is for admins only', async () => {
    const { g, reader } = await fleetGroup();
    const r = await postCsv(t, `/api/v4/groups/${g}/import/drivers`, lines(DRIVER_HEADER), reader.auth);
    expect(r.status).toBe(403);
    expect(r.json.code).toBe('ImportDriversRoleRequired');
  });
});
