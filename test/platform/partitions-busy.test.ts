/**
 * A partition made on demand (an old backlog) that cannot get its lock in time answers 503
 * PartitionBusy with Retry-After, stores nothing, and the same batch sent again once the lock is
 * free is stored (src/platform/db/partitions.ts). No timing race: another session holds the
 * partition lock for the whole first request (the request waits out its lock timeout, 5 s) and
 * releases it before the retry. PostgreSQL only: an embedded PGlite has one session, so nothing
 * else can hold a lock while a request runs.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PARTITION_LOCK_KEY, PARTITION_RETRY_AFTER_SECONDS, partitionName } from '../../src/platform/db/partitions.js';
import { newGroup, setup, type TestApp } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { databaseUrl, engine } from '../helpers/db.js';

let t: TestApp;
beforeAll(async () => {
  if (engine === 'postgres') t = await setup();
});
afterAll(async () => t?.close());

it.skipIf(engine !== 'postgres')('a partition lock not free within the timeout answers 503 PartitionBusy with Retry-After, stores nothing, and the retry is stored', async () => {
  const g = await newGroup(t);
  const dev = await newDevice(t, g);
  const signOn = item('sign_on', new Date(Date.now() - 3_600_000), { driver_id: await newDriver(t, g), vehicle_id: await newVehicle(t, g) });
  expect((await send(t, g, dev.auth, [signOn])).json.complete).toBe(true);
  // A position 40 days old: its day partition is not made ahead (yesterday … 7 days on), so ingest makes it.
  const old = new Date(Date.now() - 40 * 86_400_000);
  const batch = [item('position', old, { lat: 48.85, lon: 2.35, gps_valid: true })];
  const schema = (await t.db.query<{ s: string }>('SELECT current_schema() AS s'))[0]!.s;
  const exists = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_class WHERE relname = $1 AND relnamespace = $2::regnamespace',
    [partitionName('positions', old), schema]))[0]!.n === 1;
  expect(await exists()).toBe(false);

  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  try {
    await holder.query('SELECT pg_advisory_lock(hashtext($1))', [PARTITION_LOCK_KEY]);
    const busy = await send(t, g, dev.auth, batch);
    expect(busy.status).toBe(503);
    expect(busy.json.code).toBe('PartitionBusy');
    expect(busy.headers['retry-after']).toBe(String(PARTITION_RETRY_AFTER_SECONDS));
    expect(await exists()).toBe(false);
    expect(await t.db.query('SELECT 1 FROM positions WHERE group_id = $1', [g])).toEqual([]);
    await holder.query('SELECT pg_advisory_unlock(hashtext($1))', [PARTITION_LOCK_KEY]);
  } finally {
    await holder.end();
  }
  const retried = await send(t, g, dev.auth, batch);
  expect(retried.status).toBe(200);
  expect(retried.json.complete).toBe(true);
  expect(await exists()).toBe(true);
  expect(await t.db.query<{ at: Date }>('SELECT at FROM positions WHERE group_id = $1', [g])).toEqual([{ at: old }]);
});
