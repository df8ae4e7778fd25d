/**
 * No module-level state holds per-app work (issue #18 §3): background work and what it keeps are
 * objects made by buildApp (appContext in src/app.ts), started and closed with the app; what is kept
 * per database handle (memos of what it read, work under way on it) is kept by the handle (Db.kept,
 * src/platform/db/kept.ts), for readers that receive only the Db. A scan of
 * src/ for a module-level `new Map`, `new WeakMap`, `new Set`, empty array (`= []`, filled later) or mutable `let`: each one found is
 * either a pure cache (the same for every app: a constant computed once, a memo of a pure
 * function) listed here with its reason, or a failure.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');

/** `file: name` → why it may live in the module. */
const ALLOWED: Record<string, string> = {
  'src/platform/http/components.ts: registry': 'the named schemas, declared when their modules load: the same for every app',
  'src/domains/feeds/gtfs-rt/schemas.ts: made': 'the GTFS-Realtime JSON components, made once from the proto when the module loads: the same for every app',
  'src/platform/ids.ts: counter': 'the ObjectId counter, per process by the ObjectId layout (with the process id and a random value)',
  'src/platform/db/postgres.ts: names': 'prepared statement names by SQL text: a pure function of the text, bounded',
  'src/domains/feeds/siri/build.ts: tags': "an XML element's tags by name: pure strings of the names the SIRI writers use, a few dozen",
  'src/domains/feeds/siri/build.ts: formatters': 'time formatters by time zone: pure, a few',
  'src/platform/time.ts: instants':
    'one Date per instant (sharedInstant): a pure function of the number, bounded (INSTANTS_KEPT); the Dates are never changed, so sharing them between apps of a process tells no app anything',
  'src/domains/gtfs/import/files.ts: GTFS_FILE_NAMES': 'a constant (ReadonlySet)',
  'src/domains/gtfs/service-days.ts: dayIndexes': "a day's trips indexed by trip, block and first departure, per schedule object (a WeakMap: a memo of a pure function of an immutable value, gone with it)",
  'src/platform/slices.ts: lane':
    "the lane of sliced work's turns: per thread by nature, like the one event loop it shares out between every app of the process; it holds only the resolvers of work waiting for its turn",
  'src/domains/feeds/fragments.ts: deflatedForms':
    "a feed piece's deflated form after the piece before it, per piece object (a WeakMap: a memo of a pure function of immutable buffers, gone with the piece)",
  'src/domains/predictions/service.ts: planned':
    "a trip's stops as predictBlock takes them, per stored stop times object (a WeakMap: a memo of a pure function of an immutable value, gone with it)",
  'src/domains/predictions/predict.ts: passings': "a trip's scheduled passings, per planned stops array (a WeakMap: a memo of a pure function of an immutable value, gone with it)",
  'src/domains/feeds/gtfs-rt/feeds.ts: writtenBuilds':
    "what a trip-updates build left, per the pieces object it kept: its size and buffers, which the next build from those pieces writes into (a WeakMap: gone with them)",
  'src/domains/feeds/network.ts: trackedFrom':
    "the tracking a snapshot's trip was told from, per FeedTrip object (a WeakMap: what the next snapshot compares with, gone with the trip and its snapshot)",
  'src/domains/trips/tracking.ts: trackedStops':
    "an open trip's stop as told from a row kept between reads (OpenTripStops, per database handle), per row object (a WeakMap: taken again only with the same status, gone with the row)",
  'src/domains/auth/passwords.ts: dummy': 'one dummy hash, computed once, verified against for unknown emails (equal timing): a constant',
};

const MUTABLE = /^(?:export\s+)?(?:(?:const|let|var)\s+(\w+)\s*(?::[^=]+)?=\s*new\s+(?:Weak)?(?:Map|Set)\b|(?:let|var)\s+(\w+)|const\s+(\w+)\b.*=\s*\[\];?$)/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return files(p);
    return /\.ts$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Module-level declarations of mutable state: `file: name`. */
function moduleState(): string[] {
  const found: string[] = [];
  for (const file of files(SRC)) {
    const rel = relative(join(SRC, '..'), file).replaceAll('\\', '/');
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      // Module level: not indented (the code is formatted; a declaration inside a block is indented).
      const m = MUTABLE.exec(line);
      if (m) found.push(`${rel}: ${m[1] ?? m[2] ?? m[3]}`);
    }
  }
  return found.sort();
}

describe('module-level state', () => {
  it('src/ holds none besides the pure caches listed, each with its reason', () => {
    const found = moduleState();
    expect(found.filter((k) => !(k in ALLOWED))).toEqual([]);
  });

  it('every entry of the allow-list is still there (an entry left after its state went is removed)', () => {
    const found = new Set(moduleState());
    expect(Object.keys(ALLOWED).filter((k) => !found.has(k))).toEqual([]);
  });

  it('the scan sees what it is meant to see', () => {
    expect(MUTABLE.exec('const queues = new WeakMap<AppContext, Q>();')?.[1]).toBe('queues');
    expect(MUTABLE.exec('export const x: Map<string, number> = new Map();')?.[1]).toBe('x');
    expect(MUTABLE.exec('let busy = false;')?.[2]).toBe('busy');
    expect(MUTABLE.exec('  const local = new Map();')).toBeNull();
  });
});
