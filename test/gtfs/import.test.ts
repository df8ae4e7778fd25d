/** GTFS import: a real third-party feed, the files and their checks, errors per file and line. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { feedZip, importZip, minimalFiles, minimalZip, publish, sampleFiles, uploadZip } from '../helpers/gtfs.js';

let t: TestApp;
let strict: TestApp;
beforeAll(async () => {
  t = await setup();
});
afterAll(async () => {
  await t?.close();
  await strict?.close();
});

const SAMPLE_ZIP = readFileSync(createRequire(import.meta.url).resolve('sample-gtfs-feed/gtfs.zip'));
/** Data lines of a CSV text (every line but the header and empty ones): the rows a file holds. */
const dataLines = (text: string) => text.split(/\r?\n/).filter((l) => l.trim() !== '').length - 1;

async function adminOf(groupId: string): Promise<TestUser> {
  return newUser(t, { groupId, role: 'admin' });
}

async function rowCount(table: string, groupId: string, gtfsId?: string): Promise<number> {
  const rows = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE group_id = $1 AND ($2::text IS NULL OR gtfs_id = $2)`, [groupId, gtfsId ?? null]);
  return rows[0]!.n;
}

/** The error answers of a refused import, as "file:line code" strings. */
const where = (json: any) => json.errors.map((e: any) => `${e.file}:${e.line} ${e.code}`);

describe('the feed of sample-gtfs-feed (a third-party feed)', () => {
  it('imports through the API: 201, counts per file equal to the rows of each file, rows in the database', async () => {
    const g = await newGroup(t, { timezone: 'Europe/Berlin' });
    const admin = await adminOf(g);
    const r = await uploadZip(t, g, admin, SAMPLE_ZIP, '?name=Spring%202019');
    expect(r.status, r.body).toBe(201);
    expect(r.json).toMatchObject({ name: 'Spring 2019', status: 'imported', publication_date: null });
    expect(r.json.gtfs_id).toMatch(/^[0-9a-f]{24}$/);

    const files = sampleFiles();
    const expected = Object.fromEntries(
      ['agency', 'stops', 'routes', 'calendar', 'calendar_dates', 'shapes', 'trips', 'stop_times', 'frequencies', 'transfers'].map((k) => [k, dataLines(files[`${k}.txt`]!)]),
    );
    expect(r.json.counts).toEqual(expected);
    const tables: Record<string, string> = {
      agency: 'gtfs_agencies', stops: 'gtfs_stops', routes: 'gtfs_routes', calendar: 'gtfs_calendars', calendar_dates: 'gtfs_calendar_dates',
      shapes: 'gtfs_shapes', trips: 'gtfs_trips', stop_times: 'gtfs_stop_times', frequencies: 'gtfs_frequencies', transfers: 'gtfs_transfers',
    };
    for (const [k, table] of Object.entries(tables)) expect(await rowCount(table, g, r.json.gtfs_id), table).toBe(expected[k]);

    // The files this service does not import are named in the warnings; so is the agencies' other time zone.
    const ignored = r.json.warnings.filter((w: any) => w.code === 'ignored_file').map((w: any) => w.file).sort();
    expect(ignored).toEqual(['levels.txt', 'pathways.txt', 'translations.txt']);
    expect(r.json.warnings.find((w: any) => w.code === 'time_zone')).toMatchObject({ file: 'agency.txt', value: 'Europe/Warsaw' });
    const version = await t.db.query('SELECT name, warning_count, feed_info FROM gtfs_versions WHERE group_id = $1', [g]);
    expect(version).toEqual([{ name: 'Spring 2019', warning_count: r.json.warning_count, feed_info: expect.objectContaining({ feed_version: 'third version', feed_publisher_name: 'Some Transit Authority' }) }]);
  });

  it('stores times as seconds of the service day, past 24:00 included, and one missing time as the other', async () => {
    const g = await newGroup(t);
    const r = await importZip(t, g, SAMPLE_ZIP);
    const times = await t.db.query<{ trip_id: string; stop_sequence: number; arrival_time: number; departure_time: number }>(
      `SELECT trip_id, stop_sequence, arrival_time, departure_time FROM gtfs_stop_times
       WHERE group_id = $1 AND gtfs_id = $2 AND trip_id IN ('during-dst-1', 'c-outbound-all-day') ORDER BY trip_id, stop_sequence`,
      [g, r.gtfs_id],
    );
    expect(times).toEqual([
      // c-outbound-all-day: the first stop gives only a departure, the last only an arrival.
      { trip_id: 'c-outbound-all-day', stop_sequence: 1, arrival_time: 19 * 3600 + 20 * 60, departure_time: 19 * 3600 + 20 * 60 },
      { trip_id: 'c-outbound-all-day', stop_sequence: 2, arrival_time: 19 * 3600 + 29 * 60 + 30, departure_time: 19 * 3600 + 30 * 60 + 30 },
      { trip_id: 'c-outbound-all-day', stop_sequence: 3, arrival_time: 19 * 3600 + 39 * 60 + 30, departure_time: 19 * 3600 + 40 * 60 + 30 },
      { trip_id: 'c-outbound-all-day', stop_sequence: 4, arrival_time: 19 * 3600 + 50 * 60, departure_time: 19 * 3600 + 50 * 60 },
      // 25:55:00 = 93300 s, 26:05:00 = 94 * 1000 + 500 s.
      { trip_id: 'during-dst-1', stop_sequence: 0, arrival_time: 93300, departure_time: 93480 },
      { trip_id: 'during-dst-1', stop_sequence: 1, arrival_time: 93780, departure_time: 93900 },
    ]);
    const trip = await t.db.query('SELECT first_stop_id, first_departure, last_stop_id, last_arrival, stop_count FROM gtfs_trips WHERE group_id = $1 AND trip_id = $2', [g, 'b-outbound-on-working-days']);
    expect(trip).toEqual([{ first_stop_id: 'center', first_departure: 18 * 3600 + 14 * 60, last_stop_id: 'airport', last_arrival: 18 * 3600 + 30 * 60, stop_count: 3 }]);
  });

  it('imports as a multipart form with one file and a name field', async () => {
    const g = await newGroup(t);
    const admin = await adminOf(g);
    const boundary = '----gtfs-test';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nFrom a form\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="feed.zip"\r\nContent-Type: application/zip\r\n\r\n`),
      SAMPLE_ZIP,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const r = await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/gtfs`, headers: { ...admin.auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: body });
    expect(r.status, r.body).toBe(201);
    expect(r.json.name).toBe('From a form');
    expect(r.json.counts.stop_times).toBe(dataLines(sampleFiles()['stop_times.txt']!));
  });
});

describe('the files of a feed', () => {
  it('a feed with only calendar_dates.txt works, and one with only calendar.txt', async () => {
    const g = await newGroup(t);
    const onlyDates = await importZip(t, g, minimalZip({ 'calendar.txt': null, 'calendar_dates.txt': 'service_id,date,exception_type\nWK,20260302,1\nWK,20260303,1\n' }));
    expect(onlyDates.counts).toMatchObject({ calendar_dates: 2, trips: 1, stop_times: 3 });
    expect(onlyDates.counts['calendar']).toBeUndefined();
    const onlyCalendar = await importZip(t, g, minimalZip());
    expect(onlyCalendar.counts).toMatchObject({ calendar: 1, trips: 1 });
    expect(onlyCalendar.counts['calendar_dates']).toBeUndefined();
  });

  it('reads a UTF-8 BOM, CRLF line ends, quoted values, spaces around values and files in one folder', async () => {
    const g = await newGroup(t);
    const files = minimalFiles({
      'stops.txt': '\uFEFFstop_id,stop_name,stop_lat,stop_lon\r\nS1,"Gare, quai ""A""",48.85,2.35\r\nS2, Second ,48.86,2.36\r\nS3,Third,48.87,2.37\r\n',
    });
    const zip = feedZip(Object.fromEntries(Object.entries(files).map(([k, v]) => [`export-2026/${k}`, v])));
    const r = await importZip(t, g, zip);
    expect(r.counts.stops).toBe(3);
    expect(r.warnings.map((w) => w.message)).toContainEqual(expect.stringContaining('folder export-2026/'));
    const names = await t.db.query<{ stop_name: string }>('SELECT stop_name FROM gtfs_stops WHERE group_id = $1 ORDER BY stop_id', [g]);
    expect(names.map((n) => n.stop_name)).toEqual(['Gare, quai "A"', 'Second', 'Third']);
  });

  it('minor problems are warnings: the value dropped or the row skipped, the feed imported', async () => {
    const g = await newGroup(t);
    const r = await importZip(t, g, minimalZip({
      'routes.txt': 'route_id,agency_id,route_short_name,route_type,route_color\nR1,A,1,3,red\n',
      'trips.txt': 'route_id,service_id,trip_id,shape_id,direction_id\nR1,WK,T1,NO_SHAPE,7\nR1,WK,T2,,0\n',
      'transfers.txt': 'from_stop_id,to_stop_id,transfer_type\nS1,S9,2\nS1,S2,2\n',
    }));
    const w = r.warnings.map((x) => `${x.file}:${x.line} ${x.field} ${x.code}`);
    expect(w).toEqual(expect.arrayContaining([
      'routes.txt:2 route_color ignored_value',
      'trips.txt:2 shape_id ignored_value',
      'trips.txt:2 direction_id ignored_value',
      'trips.txt:3 trip_id trip_without_stop_times',
      'transfers.txt:2 to_stop_id skipped_row',
    ]));
    expect(r.counts).toMatchObject({ routes: 1, trips: 2, transfers: 1 });
    const trip = await t.db.query('SELECT shape_id, direction_id FROM gtfs_trips WHERE group_id = $1 AND trip_id = $2', [g, 'T1']);
    expect(trip).toEqual([{ shape_id: null, direction_id: null }]);
    expect(await t.db.query('SELECT route_color FROM gtfs_routes WHERE group_id = $1', [g])).toEqual([{ route_color: null }]);
  });
});

describe('invalid feeds are refused with every error, by file and line, and leave nothing', () => {
  async function refused(zip: Buffer) {
    const g = await newGroup(t);
    const admin = await adminOf(g);
    const r = await uploadZip(t, g, admin, zip);
    expect(r.status, r.body).toBe(422);
    expect(r.json.code).toBe('InvalidGtfsFeed');
    expect(await rowCount('gtfs_versions', g)).toBe(0);
    for (const table of ['gtfs_stops', 'gtfs_trips', 'gtfs_stop_times', 'gtfs_calendars']) expect(await rowCount(table, g), table).toBe(0);
    return r.json;
  }

  it('a missing required file, or neither calendar file', async () => {
    const json = await refused(minimalZip({ 'stops.txt': null, 'calendar.txt': null }));
    expect(where(json)).toEqual(['stops.txt:null missing_file', 'calendar.txt:null missing_file']);
    expect(json.error_count).toBe(2);
  });

  it('an empty required file; an empty optional file is only a warning', async () => {
    const json = await refused(minimalZip({ 'routes.txt': '', 'shapes.txt': '' }));
    expect(json.errors).toEqual([
      expect.objectContaining({ file: 'routes.txt', line: null, code: 'empty_file' }),
      // trips.txt names R1, which routes.txt could not define.
      expect.objectContaining({ file: 'trips.txt', line: 2, code: 'unknown_reference' }),
    ]);
    expect(json.warnings).toEqual([expect.objectContaining({ file: 'shapes.txt', line: null, code: 'ignored_file' })]);
  });

  it('a missing required column', async () => {
    const json = await refused(minimalZip({ 'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id\nT1,08:00:00,08:00:00,S1\n' }));
    expect(json.errors).toEqual([expect.objectContaining({ file: 'stop_times.txt', line: 1, field: 'stop_sequence', code: 'missing_column' })]);
  });

  it('unknown references: trip → route, trip → service, stop_time → trip, stop_time → stop', async () => {
    const json = await refused(minimalZip({
      'trips.txt': 'route_id,service_id,trip_id\nR1,WK,T1\nR9,WK,T2\nR1,NOPE,T3\n',
      'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,08:00:00,08:00:00,S1,1\nT1,08:10:00,08:10:00,S404,2\nGHOST,08:20:00,08:20:00,S3,3\n',
    }));
    expect(json.errors.map((e: any) => `${e.file}:${e.line} ${e.field} ${e.code} ${e.value}`)).toEqual([
      'trips.txt:3 route_id unknown_reference R9',
      'trips.txt:4 service_id unknown_reference NOPE',
      'stop_times.txt:3 stop_id unknown_reference S404',
      'stop_times.txt:4 trip_id unknown_reference GHOST',
    ]);
  });

  it('bad times, a departure before its arrival, a trip without a first time', async () => {
    const json = await refused(minimalZip({
      'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,,,S1,1\nT1,08:61:00,08:10:00,S2,2\nT1,8h20,08:20:00,S3,3\nT1,09:00:00,08:59:00,S3,4\nT1,09:10:00,09:10:00,S1,5\n',
    }));
    expect(json.errors.map((e: any) => `${e.line} ${e.field} ${e.code}`)).toEqual([
      '3 arrival_time bad_time',
      '4 arrival_time bad_time',
      '5 departure_time bad_time',
      '2 departure_time bad_time',
    ]);
    expect(json.errors[3].message).toContain('first stop of trip "T1" has no time');
  });

  it('bad dates and a date range that ends before it starts', async () => {
    const json = await refused(minimalZip({
      'calendar.txt': 'service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,0,0,20260230,20261231\nWE,0,0,0,0,0,1,2,20261201,20260101\n',
      'calendar_dates.txt': 'service_id,date,exception_type\nWK,2026-03-01,1\nWK,20260301,3\n',
    }));
    expect(json.errors.map((e: any) => `${e.file}:${e.line} ${e.field} ${e.code}`)).toEqual([
      'calendar.txt:2 start_date bad_date',
      'calendar.txt:3 sunday bad_value',
      'calendar.txt:3 end_date bad_date',
      'calendar_dates.txt:2 date bad_date',
      'calendar_dates.txt:3 exception_type bad_value',
    ]);
  });

  it('duplicate keys, small files and large ones (found after the load), with both lines', async () => {
    const json = await refused(minimalZip({
      'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.85,2.35\nS2,Second,48.86,2.36\nS3,Third,48.87,2.37\nS2,Again,48.86,2.36\n',
      'calendar_dates.txt': 'service_id,date,exception_type\nWK,20260301,1\nWK,20260301,2\n',
      'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,08:00:00,08:00:00,S1,1\nT1,08:10:00,08:11:00,S2,2\nT1,08:20:00,08:20:00,S3,2\nT1,08:30:00,08:30:00,S3,01\n',
    }));
    expect(json.errors.map((e: any) => `${e.file}:${e.line} ${e.code} ${e.message}`)).toEqual([
      'stops.txt:5 duplicate_key stop_id "S2" appears more than once (first on line 3)',
      'calendar_dates.txt:3 duplicate_key service_id "WK" and date "2026-03-01" appears more than once (first on line 2)',
      // stop_sequence 01 is 1: the same key as line 2.
      'stop_times.txt:4 duplicate_key trip_id "T1" and stop_sequence "2" appears more than once (first on line 3)',
      'stop_times.txt:5 duplicate_key trip_id "T1" and stop_sequence "1" appears more than once (first on line 2)',
    ]);
  });

  it('not well-formed CSV names the line; a quoted value spanning lines keeps later line numbers right', async () => {
    const json = await refused(minimalZip({
      'stops.txt': 'stop_id,stop_name,stop_desc,stop_lat,stop_lon\nS1,First,"two\nlines",48.85,2.35\nS2,Second,,48.86,north\nS3,Third,,48.87,2.37\n',
      'routes.txt': 'route_id,route_short_name,route_type\nR1,"1,3\n',
    }));
    expect(json.errors.map((e: any) => `${e.file}:${e.line} ${e.field} ${e.code}`)).toEqual([
      'stops.txt:4 stop_lon bad_value',
      'routes.txt:2 null csv_syntax',
      // routes.txt could not be read, so its route is unknown to trips.txt.
      'trips.txt:2 route_id unknown_reference',
    ]);
  });

  it('lists the first GTFS_MAX_LISTED_PROBLEMS errors and counts them all, per code', async () => {
    strict ??= await setup({ config: { gtfs: { ...t.ctx.config.gtfs, maxListedProblems: 3 } } });
    const g = await newGroup(strict);
    const admin = await newUser(strict, { groupId: g, role: 'admin' });
    const lines = Array.from({ length: 10 }, (_v, i) => `T1,08:00:00,08:00:00,NOPE${i},${i + 1}`).join('\n');
    const r = await uploadZip(strict, g, admin, minimalZip({ 'stop_times.txt': `trip_id,arrival_time,departure_time,stop_id,stop_sequence\n${lines}\n` }));
    expect(r.status).toBe(422);
    expect(r.json.errors).toHaveLength(3);
    expect(r.json.error_count).toBe(10);
    expect(r.json.error_counts).toEqual({ unknown_reference: 10 });
    expect(r.json.detail).toContain('10 errors');
  });

  it('a failed import leaves the published version and its data untouched', async () => {
    const g = await newGroup(t);
    const admin = await adminOf(g);
    const first = await uploadZip(t, g, admin, minimalZip());
    expect((await publish(t, g, admin, first.json.gtfs_id)).status).toBe(200);
    const bad = await uploadZip(t, g, admin, minimalZip({ 'trips.txt': 'route_id,service_id,trip_id\nR9,WK,T1\n' }));
    expect(bad.status).toBe(422);
    const list = await inject(t, { url: `/api/v4/groups/${g}/gtfs`, headers: admin.auth });
    expect(list.json.map((v: any) => [v.id, v.status])).toEqual([[first.json.gtfs_id, 'published']]);
    expect(await rowCount('gtfs_stop_times', g)).toBe(3);
    expect(await rowCount('gtfs_publications', g)).toBe(1);
  });
});
