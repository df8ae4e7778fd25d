/**
 * One owner per table (issue 18, section 2): each table of the schema has one owning domain, and
 * only that domain's queries module (`src/domains/<owner>/queries.ts`, or files under
 * `src/domains/<owner>/queries/`) writes it. Other domains call the owner's service. A read model
 * joining several tables (a feed, the tracking, an export) may stay one statement: it lives in the
 * queries module of the owner of the table it reads rows of, and joins the others read-only; those
 * reads are listed in FOREIGN_READS, so every such dependency is visible (docs/architecture.md).
 *
 * The scan is simple on purpose: every string and template literal of src/ (migrations aside) is
 * searched for an upper-case SQL keyword naming a table: FROM and JOIN read it; INTO, UPDATE,
 * DELETE FROM, TRUNCATE, TABLE and COPY write it. A table named by a `${…}` in such a place is
 * reported as `(dynamic)`: the scan cannot tell which table it is (the database layer, src/platform/db,
 * works on tables named by its callers: COPY, partitions).
 *
 * KNOWN_VIOLATIONS is what is left to move, asserted exactly: a new use outside the owner fails,
 * and so does a fixed one still listed (shrink the list when you move a query).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const MIGRATIONS = join(ROOT, 'src/platform/db/migrations');

/** Each table's owning domain (a folder of src/domains). */
const OWNER: Record<string, string> = {
  groups: 'groups',
  teams: 'groups',
  users: 'users',
  memberships: 'users',
  sessions: 'auth',
  api_keys: 'auth',
  identities: 'auth',
  login_failures: 'auth',
  devices: 'fleet',
  drivers: 'fleet',
  vehicles: 'fleet',
  depots: 'fleet',
  gtfs_versions: 'gtfs',
  gtfs_publications: 'gtfs',
  gtfs_agencies: 'gtfs',
  gtfs_stops: 'gtfs',
  gtfs_routes: 'gtfs',
  gtfs_calendars: 'gtfs',
  gtfs_calendar_dates: 'gtfs',
  gtfs_shapes: 'gtfs',
  gtfs_trips: 'gtfs',
  gtfs_stop_times: 'gtfs',
  gtfs_frequencies: 'gtfs',
  gtfs_transfers: 'gtfs',
  on_demand_routes: 'gtfs',
  on_demand_stops: 'gtfs',
  rail_stations: 'gtfs',
  rail_station_links: 'gtfs',
  // What devices report, as they report it (ingest).
  device_sign_events: 'device',
  device_latest: 'device',
  device_history_events: 'device',
  device_history_snapshots: 'device',
  positions: 'device',
  trip_events: 'device',
  passenger_counts: 'device',
  trip_runs: 'device',
  vehicle_movements: 'device',
  // Derived from the reports by their own domains.
  duties: 'duties',
  danger_zones: 'duties',
  trip_tracking: 'trips',
  trip_tracking_stops: 'trips',
  trip_tracking_dirty: 'trips',
  trip_updates: 'updates',
  plannings: 'planning',
  prediction_segments: 'predictions',
  prediction_models: 'predictions',
  prediction_samples: 'predictions',
  prediction_sample_sets: 'predictions',
  ratings: 'ratings',
  sms_notifications: 'notifications',
};

/**
 * Other domains' tables a queries module reads in its read models (joins for names, teams…), never
 * writes: queries module → tables, sorted.
 */
const FOREIGN_READS: Record<string, string[]> = {
  // The login's account, the API keys' accounts and memberships, the access hook's membership: auth
  // cannot call users' service (users depends on auth; test/platform/domain-deps.test.ts).
  'src/domains/auth/queries/accounts.ts': ['memberships', 'users'],
  'src/domains/auth/queries/api-keys.ts': ['users'],
  'src/domains/auth/queries/identities.ts': ['memberships', 'users'],
  'src/domains/auth/queries/login-devices.ts': ['devices', 'groups', 'memberships'],
  'src/domains/auth/queries/sessions.ts': ['users'],
  'src/domains/groups/queries/groups.ts': ['memberships'],
  // A movement is read with the duty open on its device and seen through its driver's or vehicle's teams.
  'src/domains/device/queries/movements.ts': ['drivers', 'duties', 'vehicles'],
  'src/domains/device/queries/network.ts': ['devices', 'duties', 'vehicles'],
  'src/domains/duties/queries/attribution.ts': ['devices', 'drivers', 'vehicles'],
  'src/domains/duties/queries/duties.ts': ['drivers', 'trip_events', 'trip_runs', 'vehicles'],
  'src/domains/duties/queries/on-duty.ts': ['device_latest', 'drivers', 'vehicles'],
  // The duplicate keys of a GTFS file's table, named by the importer's fixed list of files (GTFS_FILES).
  'src/domains/gtfs/queries/import.ts': ['(dynamic)'],
  'src/domains/gtfs/queries/publications.ts': ['groups'],
  'src/domains/updates/queries.ts': ['gtfs_trips'],
  'src/domains/notifications/queries.ts': ['devices'],
  'src/domains/planning/queries.ts': ['drivers', 'vehicles'],
  'src/domains/predictions/queries/model.ts': ['groups', 'gtfs_calendar_dates', 'gtfs_calendars', 'trip_tracking', 'trip_tracking_stops'],
  'src/domains/predictions/queries/samples.ts': ['drivers', 'groups', 'trip_tracking', 'trip_tracking_stops', 'vehicles'],
  'src/domains/ratings/queries.ts': ['drivers'],
  'src/domains/trips/queries/exports.ts': ['drivers', 'vehicles'],
  // A tracking round reads what was recorded of its trips and the duties of their devices, set-based.
  'src/domains/trips/queries/round.ts': ['duties', 'passenger_counts', 'positions', 'trip_events', 'trip_runs'],
};

/** Uses of a table outside a queries module, or written by a non-owner, still to move: file → tables, sorted. */
const KNOWN_VIOLATIONS: Record<string, string[]> = {};

const DYNAMIC = '(dynamic)';

/**
 * Queries modules that name their table by code (`${…}`), with the tables it can be: each must be
 * owned by the module's domain, and the module then writes it as its owner.
 */
const DYNAMIC_TABLES: Record<string, string[]> = {
  // One statement per datahub file for both: CsvTable['table'] is 'drivers' | 'vehicles'.
  'src/domains/fleet/queries/datahub.ts': ['drivers', 'vehicles'],
};

function tsFiles(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return path === MIGRATIONS ? [] : tsFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The tables the migrations create. */
function schemaTables(): string[] {
  const text = readdirSync(MIGRATIONS).map((f) => readFileSync(join(MIGRATIONS, f), 'utf8')).join('\n');
  return [...new Set([...text.matchAll(/CREATE (?:UNLOGGED )?TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)/g)].map((m) => m[1]!))].sort();
}

/** The text of every string and template literal of a source file (a `${…}` as `${}`). */
function literals(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) out.push(node.text);
    else if (ts.isTemplateExpression(node)) out.push(node.head.text + node.templateSpans.map((s) => ` \${} ${s.literal.text}`).join(''));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

// `FROM` inside extract(… FROM x), substring(… FROM …) or IS DISTINCT FROM names no table.
const KEYWORD = String.raw`(?<!\(\w+\s|DISTINCT\s)\b(DELETE\s+FROM|FROM|JOIN|INTO|UPDATE|TRUNCATE|TABLE|COPY)\s+(?:ONLY\s+)?`;

interface Use { reads: Set<string>; writes: Set<string> }

/** The tables each file of src/ reads and writes in SQL. */
function tablesUsed(tables: readonly string[]): Map<string, Use> {
  const named = new RegExp(`${KEYWORD}(${tables.join('|')}|\\$\\{\\})(?![\\w.(])`, 'g');
  const used = new Map<string, Use>();
  for (const path of tsFiles(join(ROOT, 'src'))) {
    const file = relative(ROOT, path);
    for (const text of literals(path)) {
      for (const [, keyword, table] of text.matchAll(named)) {
        const use = used.get(file) ?? used.set(file, { reads: new Set(), writes: new Set() }).get(file)!;
        const t = table === '${}' ? DYNAMIC : table!;
        (keyword === 'FROM' || keyword === 'JOIN' ? use.reads : use.writes).add(t);
      }
    }
  }
  return used;
}

/** The domain whose queries module `file` is, else null. */
const queriesModuleOf = (file: string) => /^src\/domains\/([^/]+)\/(?:queries\.ts$|queries\/)/.exec(file)?.[1] ?? null;

describe('one owner per table', () => {
  const tables = schemaTables();

  it('every table of the migrations has one owning domain, and every owner is a domain', () => {
    expect(Object.keys(OWNER).sort()).toEqual(tables);
    const domains = new Set(readdirSync(join(ROOT, 'src/domains')).filter((d) => statSync(join(ROOT, 'src/domains', d)).isDirectory()));
    expect(Object.values(OWNER).filter((d) => !domains.has(d))).toEqual([]);
  });

  it("each table is written only from its owner's queries module, and read only from queries modules (what is left to move is listed exactly)", () => {
    const violations: Record<string, string[]> = {};
    const foreignReads: Record<string, string[]> = {};
    for (const [file, { reads, writes }] of tablesUsed(tables)) {
      const domain = queriesModuleOf(file);
      const own = (t: string) => domain !== null && (t === DYNAMIC ? file in DYNAMIC_TABLES : OWNER[t] === domain);
      const outside = domain === null ? [...new Set([...reads, ...writes])].filter((t) => t !== DYNAMIC || !file.startsWith('src/platform/db/')) : [...writes].filter((t) => !own(t));
      if (outside.length > 0) violations[file] = outside.sort();
      const foreign = domain === null ? [] : [...reads].filter((t) => !own(t) && !writes.has(t));
      if (foreign.length > 0) foreignReads[file] = foreign.sort();
    }
    expect(violations).toEqual(KNOWN_VIOLATIONS);
    expect(foreignReads).toEqual(FOREIGN_READS);
  });

  it("a queries module naming its table by code can name only its own domain's tables", () => {
    for (const [file, names] of Object.entries(DYNAMIC_TABLES)) {
      expect(names.filter((t) => OWNER[t] !== queriesModuleOf(file)), file).toEqual([]);
    }
  });

  it('a queries module belongs to a domain that owns tables', () => {
    const owners = new Set(Object.values(OWNER));
    const modules = tsFiles(join(ROOT, 'src/domains')).map((p) => relative(ROOT, p)).filter((f) => queriesModuleOf(f) !== null);
    expect(modules.filter((f) => !owners.has(queriesModuleOf(f)!))).toEqual([]);
  });
});
