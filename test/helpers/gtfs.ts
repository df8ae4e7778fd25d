/** GTFS test factories: feeds as zips (the sample feed, or small feeds written in the test). */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { importGtfs, type ImportOptions } from '../../src/domains/gtfs/import/importer.js';
import { inject, type TestApp, type TestUser } from './app.js';
import { zipBuffer, type RawEntry } from '../../src/platform/zip.js';

/** The third-party feed of the npm package sample-gtfs-feed (its plain CSV files). */
export const SAMPLE_DIR = join(dirname(createRequire(import.meta.url).resolve('sample-gtfs-feed/package.json')), 'gtfs');

export function sampleFiles(): Record<string, string> {
  return Object.fromEntries(readdirSync(SAMPLE_DIR).map((f) => [f, readFileSync(join(SAMPLE_DIR, f), 'utf8')]));
}

/** A zip of the given files (null drops a file). */
export function feedZip(files: Record<string, string | null>, extra: readonly RawEntry[] = []): Buffer {
  return zipBuffer([...Object.entries(files).filter((e): e is [string, string] => e[1] !== null).map(([name, data]) => ({ name, data })), ...extra]);
}

/** The sample feed, some files replaced or dropped (null). */
export function sampleZip(overrides: Record<string, string | null> = {}): Buffer {
  return feedZip({ ...sampleFiles(), ...overrides });
}

/**
 * A small feed of one route, written line by line in the test:
 * minimal({ 'stop_times.txt': '...' }) fills the other required files.
 */
export function minimalFiles(overrides: Record<string, string | null> = {}): Record<string, string | null> {
  return {
    'agency.txt': 'agency_id,agency_name,agency_url,agency_timezone\nA,Agency,https://a.example,Europe/Paris\n',
    'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.85,2.35\nS2,Second,48.86,2.36\nS3,Third,48.87,2.37\n',
    'routes.txt': 'route_id,agency_id,route_short_name,route_long_name,route_type,route_color,route_text_color\nR1,A,1,Line one,3,FF0000,FFFFFF\n',
    'calendar.txt': 'service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,0,0,20260101,20261231\n',
    'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id\nR1,WK,T1,Third,0,B1\n',
    'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,08:00:00,08:00:00,S1,1\nT1,08:10:00,08:11:00,S2,2\nT1,08:20:00,08:20:00,S3,3\n',
    ...overrides,
  };
}

export function minimalZip(overrides: Record<string, string | null> = {}): Buffer {
  return feedZip(minimalFiles(overrides));
}

/** Imports a zip through the service (no HTTP), from a temporary file. */
export async function importZip(t: TestApp, groupId: string, zip: Buffer, o: ImportOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'gtfs-test-'));
  try {
    const path = join(dir, 'feed.zip');
    writeFileSync(path, zip);
    return await importGtfs(t.ctx, groupId, path, o);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Uploads a zip through the API (POST /groups/{g}/gtfs, body application/zip). */
export function uploadZip(t: TestApp, groupId: string, user: TestUser, zip: Buffer, query = '') {
  return inject(t, { method: 'POST', url: `/api/v4/groups/${groupId}/gtfs${query}`, headers: { ...user.auth, 'content-type': 'application/zip' }, payload: zip });
}

export function publish(t: TestApp, groupId: string, user: TestUser, gtfsId: string) {
  return inject(t, { method: 'POST', url: `/api/v4/groups/${groupId}/gtfs/${gtfsId}/publish`, headers: user.auth });
}
