/**
 * The schedule reads kept per database handle, exact by the change feed (platform/cache.ts): the
 * group, the GTFS version in force on a date, the updates in force on a date. A trip object used
 * to read each of them two to four times. Each is read once while its tables do not change, read
 * again once a change is heard (through the API or behind it), and never taken from the cache
 * inside a transaction, which reads its own writes. The updates of a date are filtered in memory:
 * checked against the statement's own filter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Queryable } from '../../src/platform/db/index.js';
import { getGroup } from '../../src/domains/groups/service.js';
import { versionInForce } from '../../src/domains/gtfs/service-days.js';
import { updatesInForce } from '../../src/domains/updates/service.js';
import { insertTripUpdate, selectTripUpdatesInForce } from '../../src/domains/updates/queries.js';
import { newGroup, newUser, setup, type TestApp } from '../helpers/app.js';
import { importZip, minimalZip, publish } from '../helpers/gtfs.js';

let t: TestApp;
let g: string;

beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
});
afterAll(async () => t?.close());

/** The database handle, counting the statements whose text matches `re` (the cache is per handle: this one's own). */
function counting(db: Db, re: RegExp): { db: Db; count: () => number } {
  let n = 0;
  const proxy = new Proxy(db, {
    get(target, key) {
      if (key === 'query') {
        return (text: string, params?: readonly unknown[]) => {
          if (re.test(text)) n++;
          return target.query(text, params);
        };
      }
      const v: unknown = Reflect.get(target, key);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { db: proxy, count: () => n };
}

/** Polls until `ok` holds (the feed starts listening on first use; a notification travels asynchronously), failing after 5 s. */
async function eventually(ok: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 5000;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error('never held');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether `read` is answered without a statement matching the counter's pattern. */
const servedFromCache = async (c: { count: () => number }, read: () => Promise<unknown>) => {
  const before = c.count();
  await read();
  return c.count() === before;
};

class Rollback extends Error {}
async function inRolledBackTransaction(fn: (tx: Queryable) => Promise<void>): Promise<void> {
  await expect(t.db.transaction(async (tx) => {
    await fn(tx);
    throw new Rollback();
  })).rejects.toBeInstanceOf(Rollback);
}

describe('the schedule reads cached per database handle', () => {
  it('reads a group once while the groups table does not change, again once a change behind the API is heard, never inside a transaction', async () => {
    const c = counting(t.db, /FROM groups WHERE group_id = \$1/);
    await eventually(() => servedFromCache(c, () => getGroup(c.db, g)));

    await t.db.query('UPDATE groups SET name = $2 WHERE group_id = $1', [g, 'Renamed by a script']);
    await eventually(async () => (await getGroup(c.db, g))?.name === 'Renamed by a script');

    await inRolledBackTransaction(async (tx) => {
      await tx.query('UPDATE groups SET name = $2 WHERE group_id = $1', [g, 'Renamed in a transaction']);
      expect((await getGroup(tx, g))?.name).toBe('Renamed in a transaction');
    });
    expect((await getGroup(c.db, g))?.name).toBe('Renamed by a script');
  });

  it('gives a group read from the cache frozen: a caller cannot change what the next one reads', async () => {
    const c = counting(t.db, /FROM groups WHERE group_id = \$1/);
    await eventually(() => servedFromCache(c, () => getGroup(c.db, g)));
    const group = (await getGroup(c.db, g))!;
    expect(() => Object.assign(group, { timezone: 'Asia/Tokyo' })).toThrow(TypeError);
    expect((await getGroup(c.db, g))?.timezone).not.toBe('Asia/Tokyo');
  });

  it('reads the version in force once per date, and the new one once a publication is made', async () => {
    const h = await newGroup(t);
    const first = await importZip(t, h, minimalZip(), { publish: true });
    const c = counting(t.db, /FROM gtfs_publications/);
    // A date far ahead: in force then is the version published last.
    expect(await versionInForce(c.db, h, '2099-01-01')).toBe(first.gtfs_id);
    await eventually(() => servedFromCache(c, () => versionInForce(c.db, h, '2099-01-01')));

    const hAdmin = await newUser(t, { groupId: h, role: 'admin' });
    const second = await importZip(t, h, minimalZip());
    expect((await publish(t, h, hAdmin, second.gtfs_id)).status).toBeLessThan(300);
    await eventually(async () => (await versionInForce(c.db, h, '2099-01-01')) === second.gtfs_id);
  });

  it('filters the cached updates of a date as the statement does: by trip, by route, by both, none given, none matching', async () => {
    const h = await newGroup(t);
    const at = new Date('2026-03-01T08:00:00Z');
    const add = (update_id: string, trip_id: string | null, route_id: string | null, start_date = '2026-03-01', end_date = '2026-03-31') =>
      insertTripUpdate(t.db, h, {
        update_id, kind: 'cancel', trip_id, route_id, start_time: null, start_date, end_date, details: {}, message: null, body_hash: update_id, created_at: at, created_by: null,
      });
    // An update names a trip or a route, never both.
    await add('trip-a', 'A', null);
    await add('trip-b', 'B', null);
    await add('route-1', null, 'R1');
    await add('route-2', null, 'R2');
    await add('over', 'A', null, '2026-02-01', '2026-02-28');
    await t.db.query("UPDATE trip_updates SET removed_at = now() WHERE group_id = $1 AND update_id = 'route-2'", [h]);

    const filters: { tripIds?: string[]; routeIds?: string[] }[] = [{}, { tripIds: ['A'] }, { routeIds: ['R1'] }, { tripIds: ['B'], routeIds: ['R1'] }, { tripIds: [] as string[] }, { tripIds: ['Z'], routeIds: ['R9'] }];
    const c = counting(t.db, /FROM trip_updates/);
    await eventually(() => servedFromCache(c, () => updatesInForce(c.db, h, '2026-03-02')));
    for (const f of filters) {
      const cached = (await updatesInForce(c.db, h, '2026-03-02', f)).map((u) => u.update_id);
      // The statement's own filter, as the service read it before the cache.
      const read = (await selectTripUpdatesInForce(t.db, h, '2026-03-02', f.tripIds ?? null, f.routeIds ?? null)).map((u) => u.update_id);
      expect({ filter: f, ids: cached }).toEqual({ filter: f, ids: read });
    }
    // The statement's answers, written out: the filters above are not all empty.
    expect((await updatesInForce(c.db, h, '2026-03-02')).map((u) => u.update_id)).toEqual(['trip-a', 'trip-b', 'route-1']);
    expect((await updatesInForce(c.db, h, '2026-03-02', { tripIds: ['B'], routeIds: ['R1'] })).map((u) => u.update_id)).toEqual(['trip-b', 'route-1']);

    await add('later', 'C', null);
    await eventually(async () => (await updatesInForce(c.db, h, '2026-03-02', { tripIds: ['C'] })).length === 1);
  });
});
