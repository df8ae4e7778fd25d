/** The command line: transit-ops gtfs import / list, rail-stations import, on an embedded database. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/pglite.js';
import { minimalZip } from '../helpers/gtfs.js';

const root = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'gtfs-cli-'));
const dataDir = join(dir, 'db');

const run = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href, join(root, 'src/main.ts'), '--data-dir', dataDir, ...args], {
    encoding: 'utf8',
    env: { ...process.env, DATABASE_URL: '' },
  });

beforeAll(async () => {
  expect(run('migrate').status).toBe(0);
  const db = await openPglite(dataDir);
  await db.query("INSERT INTO groups (group_id, name, timezone) VALUES ('metro', 'Metro', 'Europe/Paris')");
  await db.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('transit-ops gtfs', () => {
  it('imports and publishes a feed, then lists it', () => {
    const zip = join(dir, 'feed.zip');
    writeFileSync(zip, minimalZip());
    const r = run('gtfs', 'import', '--group', 'metro', '--name', 'From the CLI', '--publish', zip);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'From the CLI', status: 'published', counts: { stops: 3, trips: 1, stop_times: 3 } });
    const list = run('gtfs', 'list', '--group', 'metro');
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: 'From the CLI', status: 'published' })]);
  });

  it('refuses an invalid feed with its errors by file and line, exit status 1', () => {
    const zip = join(dir, 'bad.zip');
    writeFileSync(zip, minimalZip({ 'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,08:00:00,08:00:00,S1,1\nT1,08:10:00,08:10:00,S404,2\n' }));
    const r = run('gtfs', 'import', '--group', 'metro', zip);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('The GTFS feed is refused: 1 error');
    expect(r.stderr).toContain('stop_times.txt:3 stop_id: stop_id "S404" is not in stops.txt');
  });
});

describe('transit-ops rail-stations import', () => {
  it('loads the referential from a CSV file', () => {
    const csv = join(dir, 'stations.csv');
    writeFileSync(csv, 'id;name;uic;latitude;longitude;country\nFRLYD;Lyon Part-Dieu;8772319;45.7606;4.8596;FR\n');
    const r = run('rail-stations', 'import', csv);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ stations: 1 });
  });
});
