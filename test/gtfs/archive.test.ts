/**
 * Hostile uploads: each refused with a clear 4xx, no data left in the database, and no
 * temporary file left on disk.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { feedZip, minimalFiles, minimalZip, uploadZip } from '../helpers/gtfs.js';
import { zipBuffer } from '../../src/platform/zip.js';

// This file's uploads are spooled in a folder of its own, so leftovers are seen (tests run in a process per file).
const spoolDir = mkdtempSync(join(tmpdir(), 'gtfs-spool-'));
process.env['TMPDIR'] = spoolDir;

const SAMPLE_ZIP = readFileSync(createRequire(import.meta.url).resolve('sample-gtfs-feed/gtfs.zip'));

let t: TestApp;
let small: TestApp;
let g: string;
let admin: TestUser;
beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  // Limits well under the sample feed: 23 KB zipped, 14 files, 74 KB inflated.
  small = await setup({ config: { gtfs: { ...t.ctx.config.gtfs, maxUploadBytes: 20_000, maxEntries: 10, maxUncompressedBytes: 60_000 } } });
});
afterAll(async () => {
  await t?.close();
  await small?.close();
  rmSync(spoolDir, { recursive: true, force: true });
});
afterEach(async () => {
  expect(readdirSync(spoolDir), 'temporary upload files left behind').toEqual([]);
  expect(await t.db.query('SELECT count(*)::int AS n FROM gtfs_versions WHERE group_id = $1', [g])).toEqual([{ n: 0 }]);
  expect(await t.db.query('SELECT count(*)::int AS n FROM gtfs_stops WHERE group_id = $1', [g])).toEqual([{ n: 0 }]);
});

async function refusedWith(r: { status: number; json: any; body: string }, status: number, code: string, detail?: RegExp) {
  expect(r.status, r.body).toBe(status);
  expect(r.json.code).toBe(code);
  if (detail) expect(r.json.detail).toMatch(detail);
}

describe('hostile archives', () => {
  it('a body that is not a zip, or a truncated zip: 400 InvalidGtfsArchive', async () => {
    await refusedWith(await uploadZip(t, g, admin, Buffer.from('agency_id,agency_name\nA,B\n')), 400, 'InvalidGtfsArchive', /not a readable zip archive/);
    await refusedWith(await uploadZip(t, g, admin, SAMPLE_ZIP.subarray(0, SAMPLE_ZIP.length - 200)), 400, 'InvalidGtfsArchive');
  });

  it('path traversal and absolute names: 400 InvalidGtfsArchive naming the entry', async () => {
    const traversal = feedZip(minimalFiles(), [{ name: '../../etc/cron.d/evil', data: '* * * * * root sh' }]);
    await refusedWith(await uploadZip(t, g, admin, traversal), 400, 'InvalidGtfsArchive', /invalid relative path: \.\.\/\.\.\/etc\/cron\.d\/evil/);
    const absolute = feedZip(minimalFiles(), [{ name: '/etc/passwd', data: 'root:x:0:0' }]);
    await refusedWith(await uploadZip(t, g, admin, absolute), 400, 'InvalidGtfsArchive', /absolute path/);
    const backslashes = feedZip(minimalFiles(), [{ name: '..\\..\\boot.ini', data: 'x' }]);
    await refusedWith(await uploadZip(t, g, admin, backslashes), 400, 'InvalidGtfsArchive', /invalid relative path/);
  });

  it('a zip bomb (an entry inflating a thousand times): 413 GtfsArchiveTooLarge, before inflating it', async () => {
    const files = minimalFiles();
    const bomb = feedZip({ ...files, 'stop_times.txt': files['stop_times.txt']! + 'T1,08:30:00,08:30:00,S1,9\n'.repeat(1_000_000) });
    expect(bomb.length).toBeLessThan(200_000);
    await refusedWith(await uploadZip(t, g, admin, bomb), 413, 'GtfsArchiveTooLarge', /stop_times\.txt expands \d+ times.*zip bomb/);
  });

  it('an entry inflating to more than its header declares: 400, and the partial load rolled back', async () => {
    const files = minimalFiles();
    const stopTimes = files['stop_times.txt']! + 'T1,08:30:00,08:30:00,S1,4\n'.repeat(500);
    const lying = zipBuffer([
      ...Object.entries(files).filter(([n]) => n !== 'stop_times.txt').map(([name, data]) => ({ name, data: data! })),
      { name: 'stop_times.txt', data: stopTimes, declaredSize: 300 },
    ]);
    await refusedWith(await uploadZip(t, g, admin, lying), 400, 'InvalidGtfsArchive', /stop_times\.txt: too many bytes/);
  });

  it('an encrypted entry: 400', async () => {
    const encrypted = zipBuffer(Object.entries(minimalFiles()).map(([name, data]) => ({ name, data: data!, encrypted: name === 'stops.txt' })));
    await refusedWith(await uploadZip(t, g, admin, encrypted), 400, 'InvalidGtfsArchive', /stops\.txt is encrypted/);
  });

  it('over the inflated size or entry count limits: 413 GtfsArchiveTooLarge', async () => {
    const sg = await newGroup(small);
    const sAdmin = await newUser(small, { groupId: sg, role: 'admin' });
    const manyEntries = feedZip(minimalFiles(), Array.from({ length: 6 }, (_v, i) => ({ name: `extra-${i}.txt`, data: 'x' })));
    await refusedWith(await uploadZip(small, sg, sAdmin, manyEntries), 413, 'GtfsArchiveTooLarge', /12 entries.*GTFS_MAX_ENTRIES/);
    const files = minimalFiles();
    const big = feedZip({ ...files, 'shapes.txt': 'shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\n' + 'SH1,48.1,2.1,1\n'.repeat(5000) });
    expect(big.length).toBeLessThan(20_000);
    await refusedWith(await uploadZip(small, sg, sAdmin, big), 413, 'GtfsArchiveTooLarge', /GTFS_MAX_UNCOMPRESSED_BYTES/);
    expect(await small.db.query('SELECT count(*)::int AS n FROM gtfs_versions')).toEqual([{ n: 0 }]);
  });
});

describe('hostile bodies', () => {
  it('over GTFS_MAX_UPLOAD_BYTES: 413 PayloadTooLarge, with or without a Content-Length, raw or in a form', async () => {
    const sg = await newGroup(small);
    const sAdmin = await newUser(small, { groupId: sg, role: 'admin' });
    await refusedWith(await uploadZip(small, sg, sAdmin, SAMPLE_ZIP), 413, 'PayloadTooLarge', /GTFS_MAX_UPLOAD_BYTES/);
    const streamed = await inject(small, { method: 'POST', url: `/api/v4/groups/${sg}/gtfs`, headers: { ...sAdmin.auth, 'content-type': 'application/zip' }, payload: Readable.from([SAMPLE_ZIP.subarray(0, 15_000), SAMPLE_ZIP.subarray(15_000)]) });
    await refusedWith(streamed, 413, 'PayloadTooLarge');
    const boundary = 'b0undary';
    const form = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.zip"\r\n\r\n`), SAMPLE_ZIP, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    const multipart = await inject(small, { method: 'POST', url: `/api/v4/groups/${sg}/gtfs`, headers: { ...sAdmin.auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: Readable.from([form]) });
    await refusedWith(multipart, 413, 'PayloadTooLarge');
    expect(await small.db.query('SELECT count(*)::int AS n FROM gtfs_versions')).toEqual([{ n: 0 }]);
  });

  it('over a real connection, a client streaming too much reads the 413 answer (the request is not torn down)', async () => {
    const sg = await newGroup(small);
    const sAdmin = await newUser(small, { groupId: sg, role: 'admin' });
    await small.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = small.app.server.address() as { port: number };
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: `/api/v4/groups/${sg}/gtfs`, headers: { ...sAdmin.auth, 'content-type': 'application/zip', 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      for (let i = 0; i < 4; i++) req.write(SAMPLE_ZIP);
      req.end();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).code).toBe('PayloadTooLarge');
  });

  it('a content type that is neither a zip nor a form (JSON included): 415', async () => {
    const r = await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/gtfs`, headers: { ...admin.auth, 'content-type': 'text/csv' }, payload: 'a,b\n' });
    await refusedWith(r, 415, 'UnsupportedMediaType');
    const json = await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/gtfs`, headers: admin.auth, payload: { feed: 'x' } });
    await refusedWith(json, 415, 'UnsupportedMediaType', /application\/zip/);
  });

  it('a form with no file, or with two: 422 naming the part', async () => {
    const boundary = 'b0undary';
    const part = (name: string, file?: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file ? `; filename="${file}"` : ''}\r\n\r\n${file ? minimalZip().toString('latin1') : 'x'}\r\n`;
    const send = (body: string) => inject(t, { method: 'POST', url: `/api/v4/groups/${g}/gtfs`, headers: { ...admin.auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: Buffer.from(`${body}--${boundary}--\r\n`, 'latin1') });
    const none = await send(part('name'));
    expect(none.status).toBe(422);
    expect(none.json.detail[0]).toMatchObject({ loc: ['body', 'file'], type: 'missing' });
    const two = await send(part('file', 'a.zip') + part('other', 'b.zip'));
    expect(two.status, two.body).toBe(422);
    expect(two.json.detail[0].msg).toContain('one file only');
  });
});
