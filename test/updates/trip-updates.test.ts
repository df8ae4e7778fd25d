import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { overlayKey, overlaysFor } from '../../src/domains/updates/service.js';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

const clock = fixedClock('2026-03-10T07:00:00Z');
let t: TestApp;
let g: string;
let op: TestUser;
beforeAll(async () => {
  t = await setup({ clock });
  g = await newGroup(t);
  op = await newUser(t, { groupId: g, role: 'operator' });
  await importZip(t, g, minimalZip({
    'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id\nR1,WK,T1,Third,0,B1\nR1,WK,T2,Third,0,B1\n',
    'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,08:00:00,08:00:00,S1,1\nT1,08:10:00,08:11:00,S2,2\nT1,08:20:00,08:20:00,S3,3\nT2,09:00:00,09:00:00,S1,1\nT2,09:10:00,09:11:00,S2,2\nT2,09:20:00,09:20:00,S3,3\n',
  }), { publish: true });
});
afterAll(async () => t?.close());

const put = (body: object, headers = op.auth) => inject(t, { method: 'PUT', url: `/api/v4/groups/${g}/trip-updates`, headers, payload: body });
const search = (q: string) => inject(t, { url: `/api/v4/groups/${g}/trip-updates/search${q}`, headers: op.auth });

describe('trip updates', () => {
  it('are idempotent by the client\'s id: same body, same answer; other body, 409', async () => {
    const body = { update_id: 'cancel-T1-0310', kind: 'cancel', trip_id: 'T1', start_date: '2026-03-10', end_date: '2026-03-10', message: { header: 'Trip cancelled', cause: 'STRIKE' } };
    const first = await put(body);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ update_id: 'cancel-T1-0310', kind: 'cancel', trip_id: 'T1', status: 'in_force', is_detour: false, created_by: op.userId });
    const again = await put({ ...body, message: { cause: 'STRIKE', header: 'Trip cancelled' } });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    const other = await put({ ...body, end_date: '2026-03-11' });
    expect(other.status).toBe(409);
    expect(other.json.code).toBe('TripUpdateConflict');
    expect(await t.db.query('SELECT 1 FROM trip_updates WHERE group_id = $1', [g])).toHaveLength(1);
  });

  it('refuse bad references and bad combinations, naming the field', async () => {
    const base = { start_date: '2026-03-10', end_date: '2026-03-12' };
    const cases: [object, string[]][] = [
      [{ update_id: 'a', kind: 'cancel', trip_id: 'NOPE', ...base }, ['body', 'trip_id']],
      [{ update_id: 'b', kind: 'cancel', trip_id: 'T1', route_id: 'R1', ...base }, ['body', 'trip_id']],
      [{ update_id: 'c', kind: 'skip_stop', trip_id: 'T1', ...base }, ['body', 'stop']],
      [{ update_id: 'd', kind: 'skip_stop', trip_id: 'T1', stop: { stop_id: 'S9' }, ...base }, ['body', 'stop']],
      [{ update_id: 'e', kind: 'cancel', route_id: 'R9', ...base }, ['body', 'route_id']],
      [{ update_id: 'f', kind: 'message', trip_id: 'T1', ...base }, ['body', 'message']],
      [{ update_id: 'g', kind: 'cancel', trip_id: 'T1', start_date: '2026-03-12', end_date: '2026-03-10' }, ['body', 'end_date']],
      [{ update_id: 'h', kind: 'move_stop', trip_id: 'T1', stop: { stop_sequence: 2 }, replacement: { lat: 48.9 }, ...base }, ['body', 'replacement']],
      [{ update_id: 'i', kind: 'cancel', trip_id: 'T1', stop: { stop_sequence: 2 }, ...base }, ['body', 'stop']],
    ];
    for (const [body, loc] of cases) {
      const r = await put(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.detail.map((d: any) => d.loc.slice(0, 2))).toContainEqual(loc);
    }
    const driver = await newUser(t, { groupId: g, role: 'reader' });
    expect((await put({ update_id: 'j', kind: 'cancel', trip_id: 'T1', ...base }, driver.auth)).json.code).toBe('PutTripUpdateRoleRequired');
  });

  it('overlay the schedule: skips, moves, additions and detours, the most recent winning on a stop', async () => {
    const base = { start_date: '2026-03-16', end_date: '2026-03-20' };
    await put({ update_id: 'skip-S2', kind: 'skip_stop', trip_id: 'T2', stop: { stop_id: 'S2' }, ...base });
    await put({ update_id: 'move-S2', kind: 'move_stop', trip_id: 'T2', stop: { stop_sequence: 2 }, replacement: { lat: 48.861, lon: 2.361, name: 'Temporary S2' }, start_date: '2026-03-18', end_date: '2026-03-18' });
    await put({ update_id: 'add-after-S1', kind: 'add_stop', route_id: 'R1', added_stop: { place: { stop_id: 'S3' }, after: { stop_id: 'S1' }, travel_seconds: 120 }, ...base });
    const overlays = async (date: string) => overlaysFor(t.db, g, date, [{ trip_id: 'T2', route_id: 'R1' }, { trip_id: 'T1', route_id: 'R1' }]);
    const d17 = (await overlays('2026-03-17')).get(overlayKey({ trip_id: 'T2' }))!;
    expect([...d17.skipped.keys()]).toEqual([2]);
    expect(d17.added).toEqual([{ update_id: 'add-after-S1', place: { stop_id: 'S3' }, after_stop_sequence: 1, travel_seconds: 120 }]);
    const d18 = (await overlays('2026-03-18')).get(overlayKey({ trip_id: 'T2' }))!;
    expect([...d18.skipped.keys()]).toEqual([]);
    expect(d18.moved.get(2)?.place).toEqual({ lat: 48.861, lon: 2.361, name: 'Temporary S2' });
    const t1 = (await overlays('2026-03-17')).get(overlayKey({ trip_id: 'T1' }))!;
    expect(t1.added).toHaveLength(1);
    expect(t1.skipped.size).toBe(0);
    expect((await overlays('2026-03-21')).get(overlayKey({ trip_id: 'T2' }))!.applied).toEqual([]);
  });

  it('are found by date, period, trip (with its route\'s), route and kind; detours are the deviations', async () => {
    await put({
      update_id: 'detour-T1', kind: 'detour', trip_id: 'T1', start_date: '2026-04-01', end_date: '2026-04-30',
      detour: { name: 'Works on Main St', shape: [[2.35, 48.85], [2.34, 48.86], [2.37, 48.87]], skipped_stops: [{ stop_id: 'S2' }], added_stops: [{ place: { lat: 48.86, lon: 2.34, name: 'Temporary' }, after: { stop_sequence: 1 } }] },
      message: { header: 'Detour', effect: 'DETOUR' },
    });
    const onDate = await search('?date=2026-04-10');
    expect(onDate.json.map((u: any) => u.update_id)).toEqual(['detour-T1']);
    expect(onDate.json[0]).toMatchObject({ is_detour: true, status: 'scheduled' });
    const byTrip = await search('?start_date=2026-03-01&end_date=2026-04-30&trip_id=T2');
    expect(byTrip.json.map((u: any) => u.update_id)).toEqual(['skip-S2', 'move-S2', 'add-after-S1']);
    const byRoute = await search('?start_date=2026-03-01&end_date=2026-04-30&route_id=R1&kind=detour');
    expect(byRoute.json.map((u: any) => u.update_id)).toEqual(['detour-T1']);
    const deviations = await inject(t, { url: `/api/v4/groups/${g}/deviations?start_date=2026-03-01&end_date=2026-12-31`, headers: op.auth });
    expect(deviations.json.map((u: any) => u.update_id)).toEqual(['detour-T1']);
  });

  it('can be ended early and removed, and then stop applying', async () => {
    await put({ update_id: 'cancel-week', kind: 'cancel', trip_id: 'T2', start_date: '2026-05-04', end_date: '2026-05-08' });
    const ended = await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/trip-updates/cancel-week/end`, headers: op.auth, payload: { end_date: '2026-05-05' } });
    expect(ended.json).toMatchObject({ end_date: '2026-05-05' });
    expect(ended.json.ended_at).toBe(clock.now().toISOString());
    expect((await overlaysFor(t.db, g, '2026-05-05', [{ trip_id: 'T2', route_id: 'R1' }])).get('T2@')!.cancelled).toBe(true);
    expect((await overlaysFor(t.db, g, '2026-05-06', [{ trip_id: 'T2', route_id: 'R1' }])).get('T2@')!.cancelled).toBe(false);
    const later = await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/trip-updates/cancel-week/end`, headers: op.auth, payload: { end_date: '2026-05-09' } });
    expect(later.json.detail[0].loc).toEqual(['body', 'end_date']);
    const removed = await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/trip-updates/cancel-week`, headers: op.auth });
    expect(removed.json.status).toBe('removed');
    expect((await overlaysFor(t.db, g, '2026-05-05', [{ trip_id: 'T2', route_id: 'R1' }])).get('T2@')!.cancelled).toBe(false);
    expect((await search('?date=2026-05-05')).json).toEqual([]);
    expect((await search('?date=2026-05-05&include_removed=true')).json.map((u: any) => u.update_id)).toEqual(['cancel-week']);
    expect((await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/trip-updates/nope`, headers: op.auth })).json.code).toBe('TripUpdateNotFound');
  });
});
