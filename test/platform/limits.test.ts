/** spec: Limits: every format bound answers 422 with the HTTPValidationError body. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let g: string;
let su: TestUser;
beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  su = await newUser(t, { superuser: true });
});
afterAll(async () => t?.close());

async function expect422(url: string, loc: (string | number)[], type?: string) {
  const r = await inject(t, { url, headers: su.auth });
  expect(r.status, `${url} → ${r.body}`).toBe(422);
  expect(Array.isArray(r.json.detail)).toBe(true);
  const item = r.json.detail.find((d: any) => JSON.stringify(d.loc) === JSON.stringify(loc));
  expect(item, `${url}: no detail at ${JSON.stringify(loc)} in ${r.body}`).toBeDefined();
  expect(typeof item.msg).toBe('string');
  if (type) expect(item.type).toBe(type);
  return item;
}

async function expectAccepted(url: string) {
  const r = await inject(t, { url, headers: su.auth });
  expect(r.status, `${url} → ${r.body}`).not.toBe(422);
}

describe('format bounds of the spec', () => {
  it('period is YYYY-MM with month 01 to 12', async () => {
    const base = `/api/v4/groups/${g}/notifications/sms-count`;
    await expect422(`${base}?period=2024-13`, ['query', 'period'], 'string_pattern_mismatch');
    await expect422(`${base}?period=2024-00`, ['query', 'period'], 'string_pattern_mismatch');
    await expect422(`${base}?period=2024-1`, ['query', 'period']);
    await expect422(`${base}?period=202401`, ['query', 'period']);
    await expectAccepted(`${base}?period=2024-12`);
  });

  it('dates of trips, export/trips and planning are exactly 8 digits YYYYMMDD', async () => {
    for (const path of ['trips', 'export/trips', 'planning']) {
      const base = `/api/v4/groups/${g}/${path}`;
      await expect422(`${base}?date=2024-01-15`, ['query', 'date'], 'string_pattern_mismatch');
      await expect422(`${base}?date=2024011`, ['query', 'date']);
      await expect422(`${base}?date=20240230`, ['query', 'date'], 'value_error');
      await expect422(base, ['query', 'date'], 'missing');
      await expectAccepted(`${base}?date=20240115`);
    }
  });

  it('the date of a single trip is YYYY-MM-DD', async () => {
    const base = `/api/v4/groups/${g}/trips/T1`;
    await expect422(`${base}?date=20240115`, ['query', 'date'], 'string_pattern_mismatch');
    await expect422(`${base}?date=2024-02-30`, ['query', 'date']);
    await expect422(base, ['query', 'date'], 'missing');
    await expect422(`${base}?date=2024-01-15&merge=maybe`, ['query', 'merge'], 'bool_parsing');
    await expectAccepted(`${base}?date=2024-01-15`);
  });

  it('the date of vehicle movements is YYYY-MM-DD or YYYYMMDD', async () => {
    for (const path of ['vehicle-movements', 'blocks/B1/vehicle-movements', 'blocks/B1/vehicle_movements']) {
      const base = `/api/v4/groups/${g}/${path}`;
      await expect422(`${base}?date=15/01/2024`, ['query', 'date']);
      await expect422(`${base}?date=2024-0115`, ['query', 'date']);
      await expect422(`${base}?date=20241301`, ['query', 'date']);
      await expectAccepted(`${base}?date=2024-01-15`);
      await expectAccepted(`${base}?date=20240115`);
    }
  });

  it('driver_id of a driver read and before_id are exactly 24 hexadecimal characters', async () => {
    await expect422(`/api/v4/groups/${g}/drivers/abc`, ['path', 'driver_id'], 'string_pattern_mismatch');
    await expect422(`/api/v4/groups/${g}/drivers/${'g'.repeat(24)}`, ['path', 'driver_id']);
    await expect422(`/api/v4/groups/${g}/drivers/${'a'.repeat(25)}`, ['path', 'driver_id']);
    await expectAccepted(`/api/v4/groups/${g}/drivers/${'a'.repeat(24)}`);
    await expect422(`/api/v4/groups/${g}/devices/D1/history?before_id=123`, ['query', 'before_id'], 'string_pattern_mismatch');
  });

  it('at is integer UNIX seconds, and at and before_id cannot be combined', async () => {
    const base = `/api/v4/groups/${g}/devices/D1/history`;
    await expect422(`${base}?at=yesterday`, ['query', 'at'], 'int_parsing');
    await expect422(`${base}?at=1.5`, ['query', 'at'], 'int_parsing');
    const both = await expect422(`${base}?at=1700000000&before_id=${'a'.repeat(24)}`, ['query'], 'value_error');
    expect(both.msg).toContain('mutually exclusive');
    await expectAccepted(`${base}?at=1700000000`);
  });

  it('statuses are unique values of the vehicle status set', async () => {
    const base = `/api/v4/groups/${g}/vehicles`;
    await expect422(`${base}?statuses=active&statuses=active`, ['query', 'statuses'], 'value_error');
    await expect422(`${base}?statuses=flying`, ['query', 'statuses', 0], 'enum');
    await expectAccepted(`${base}?statuses=active&statuses=maintenance`);
    const pub = await inject(t, { url: `/api/v4/groups/${g}/vehicles/public?statuses=active&statuses=active` });
    expect(pub.status).toBe(422);
  });

  it('archived on the driver list is a boolean that defaults to false', async () => {
    await expect422(`/api/v4/groups/${g}/drivers?archived=perhaps`, ['query', 'archived'], 'bool_parsing');
    await expectAccepted(`/api/v4/groups/${g}/drivers`);
    await expectAccepted(`/api/v4/groups/${g}/drivers?archived=true`);
  });
});
