#!/usr/bin/env node
/** The transit-ops command line: serve, migrate, and the provisioning commands. */
import { Command, Option } from 'commander';
import { appContext, buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { systemClock } from './platform/clock.js';
import type { AppContext } from './platform/context.js';
import { autovacuumOff, describeDatabase, openDatabase, type Db } from './platform/db/index.js';
import { migrate } from './platform/db/migrate.js';
import { bootstrapSuperuser, createUser } from './domains/users/service.js';
import { importGtfs } from './domains/gtfs/import/importer.js';
import { importStations } from './domains/gtfs/rail/service.js';
import { listVersions, publishGtfs } from './domains/gtfs/service.js';
import { HttpError, ValidationError } from './platform/http/errors.js';
import type { Simulator } from './domains/demo/simulator.js';
import { readFile } from 'node:fs/promises';
import cliProgress from 'cli-progress';
import pino from 'pino';

const program = new Command('transit-ops')
  .description('Operations back office for public transport networks')
  .addOption(new Option('--data-dir <dir>', 'embedded database directory, or memory:// (when DATABASE_URL is unset)').env('DATA_DIR'))
  .showHelpAfterError();

function config(): Config {
  const c = loadConfig();
  const dataDir = program.opts<{ dataDir?: string }>().dataDir;
  return dataDir ? { ...c, dataDir } : c;
}

/** Runs a command on the migrated database, with a context whose services are closed after it (nothing is started). */
async function withDatabase<T>(fn: (db: Db, c: Config, ctx: AppContext) => Promise<T>): Promise<T> {
  const c = config();
  const db = await openDatabase(c);
  const ctx = appContext({ config: c, db, clock: systemClock, log: pino({ level: c.logLevel === 'silent' ? 'silent' : 'warn' }) });
  try {
    await migrate(db);
    return await fn(db, c, ctx);
  } finally {
    await ctx.services.lifecycle.close('beforeServer');
    await ctx.services.lifecycle.close('afterServer');
    await db.close();
  }
}

program
  .command('serve')
  .description('run the HTTP service (migrates the database first)')
  .option('--no-simulator', 'with the demo network: do not run the simulator')
  .action(async (o: { simulator: boolean }) => {
    const c = config();
    const db = await openDatabase(c);
    const { applied } = await migrate(db);
    const app = await buildApp({ config: c, db });
    if (applied.length > 0) app.log.info({ migrations: applied.map((m) => `${m.version} ${m.name}`) }, 'database migrated');
    if (await autovacuumOff(db)) app.log.warn('PostgreSQL autovacuum is off: the report tables get no statistics and their plans degrade; turn it on (docs/operations.md §1)');
    const superuser = await bootstrapSuperuser(app.ctx);
    if (superuser === 'created') app.log.info({ email: c.superuserEmail }, 'superuser created');
    if (c.demo !== false && !c.databaseUrl) console.log('transit-ops: preparing the embedded database (the demo network loads on the first start; TRANSIT_OPS_DEMO=0 turns it off)…');
    // The demo's modules load only when a command needs them (a lighter start for the others).
    const { demoBanner, prepareDemo } = await import('./domains/demo/start.js');
    const demo = await prepareDemo(app.ctx, c);

    let simulator: Simulator | null = null;
    let closing = false;
    const shutdown = async (signal: string) => {
      if (closing) return;
      closing = true;
      app.log.info({ signal }, 'shutting down: finishing in-flight requests');
      const force = setTimeout(() => {
        app.log.error('shutdown took more than 30 s; exiting');
        process.exit(1);
      }, 30_000);
      force.unref();
      try {
        await simulator?.stop();
        await app.close();
        await db.close();
      } finally {
        process.exit(0);
      }
    };
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    process.on('SIGINT', () => void shutdown('SIGINT'));

    await app.listen({ port: c.port, host: c.host });
    const base = c.publicUrl ?? `http://${c.host === '0.0.0.0' || c.host === '::' ? 'localhost' : c.host}:${(app.server.address() as { port: number }).port}`;
    console.log(
      [
        '',
        `transit-ops is running on ${base}`,
        `  database:      ${describeDatabase(c)}`,
        `  API reference: ${base}/docs`,
        `  OpenAPI:       ${base}/api/v4/openapi/internal.json (also public.json, datahub.json)`,
        '',
        ...(demo.decision === 'off' ? [] : [...demoBanner(base, demo.loaded), '']),
      ].join('\n'),
    );
    if (demo.decision !== 'off' && o.simulator) {
      const port = (app.server.address() as { port: number }).port;
      const local = c.host === '0.0.0.0' || c.host === '::' ? '127.0.0.1' : c.host.includes(':') ? `[${c.host}]` : c.host;
      const { Simulator } = await import('./domains/demo/simulator.js');
      simulator = new Simulator({ baseUrl: `http://${local}:${port}`, log: (m) => app.log.warn(m) });
      const sim = simulator;
      const started = Date.now();
      console.log('Simulator: the demo vehicles are signing on and sending what they did so far today (serve --no-simulator turns it off)…');
      void sim.start().then(
        () => {
          console.log(`Simulator: caught up with today in ${((Date.now() - started) / 1000).toFixed(1)} s (${sim.stats.accepted} reports); the vehicles now run in real time.`);
          if (!closing) sim.run();
        },
        (err: unknown) => app.log.error({ err }, 'the simulator could not start'),
      );
    }
  });

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    await withDatabase(async (db, c) => {
      console.log(`${describeDatabase(c)}: schema is current`);
      void db;
    });
  });

program
  .command('demo')
  .description('the demo network')
  .command('load')
  .description('load the demo network (group "demo": GTFS, resources, accounts, planning of today) into the database')
  .action(async () => {
    const { DEMO_GROUP, demoExists, loadDemo } = await import('./domains/demo/load.js');
    const { demoBanner } = await import('./domains/demo/start.js');
    await withDatabase(async (db, c, ctx) => {
      if (await demoExists(ctx)) throw new UsageError(`the group "${DEMO_GROUP}" already exists in ${describeDatabase(c)}`);
      const loaded = await loadDemo(ctx);
      console.log(demoBanner(c.publicUrl ?? `http://localhost:${c.port}`, loaded).join('\n'));
    });
  });

program
  .command('simulate')
  .description('drive the vehicles of a group\'s published GTFS against a running service, over HTTP (device API, device keys); docs/simulator.md')
  .option('--url <url>', 'the service', `http://localhost:${process.env['PORT'] ?? 8080}`)
  .option('--group <group_id>', 'the group', 'demo')
  .option('--provision', 'make the vehicle, driver and device of each block when missing')
  .option('--vehicles <n>', 'at most this many vehicles: the first blocks running at the start', (v) => Number.parseInt(v, 10))
  .option('--period <seconds>', 'seconds between two positions of a vehicle (default 15)', (v) => Number.parseInt(v, 10))
  .option('--routes <ids>', 'only these routes (comma-separated)')
  .option('--seed <n>', 'the traffic model\'s seed (the demo: the seed it was loaded with, 2026)', (v) => Number.parseInt(v, 10))
  .option('--backfill-days <n>', 'also send whole past service days first (history for stats, exports and predictions)', (v) => Number.parseInt(v, 10), 0)
  .option('--once', 'send what is due up to now, then exit (with --backfill-days: a fast backfill)')
  .option('--admin <email:password>', 'an admin account of the group (provisioning, device keys; the demo admin for the demo group)')
  .option('--admin-key <key>', 'an admin API key instead of an account (device keys need an account: only devices whose keys exist can report)')
  .option('--reader <email:password>', 'an account that reads planning (operator, regulator, reader); the demo operator for the demo group')
  .action(async (o: { url: string; group: string; provision?: boolean; vehicles?: number; period?: number; routes?: string; seed?: number; backfillDays: number; once?: boolean; admin?: string; adminKey?: string; reader?: string }) => {
    const account = (v: string | undefined) => {
      if (!v) return undefined;
      const i = v.indexOf(':');
      if (i < 1) throw new UsageError('give an account as email:password');
      return { email: v.slice(0, i), password: v.slice(i + 1) };
    };
    for (const [name, v] of [['--vehicles', o.vehicles], ['--period', o.period], ['--seed', o.seed], ['--backfill-days', o.backfillDays]] as const) {
      if (v !== undefined && (!Number.isInteger(v) || v < (name === '--period' || name === '--vehicles' ? 1 : 0))) throw new UsageError(`${name} must be a whole number${name === '--period' || name === '--vehicles' ? ' of at least 1' : ''}`);
    }
    const admin = account(o.admin);
    const reader = account(o.reader);
    const baseUrl = o.url.replace(/\/$/, '');
    const log = (m: string) => console.error(m);
    let sim: import('./domains/simulate/simulator.js').NetworkSimulator;
    const routes = o.routes ? o.routes.split(',').map((r) => r.trim()).filter(Boolean) : undefined;
    if (o.group === 'demo' && !o.provision && !o.adminKey) {
      // The demo: the same simulator, with the demo's accounts, planning and seed.
      const { Simulator } = await import('./domains/demo/simulator.js');
      sim = new Simulator({
        baseUrl, groupId: o.group, backfillDays: o.backfillDays, log, ...(o.seed !== undefined ? { seed: o.seed } : {}), ...(admin ? { admin } : {}), ...(reader ? { reader } : {}),
        ...(o.vehicles !== undefined ? { vehicles: o.vehicles } : {}), ...(o.period !== undefined ? { positionEvery: o.period } : {}), ...(routes ? { routes } : {}),
      });
    } else {
      const adminAuth = o.adminKey ? { apiKey: o.adminKey } : admin;
      if (!adminAuth) throw new UsageError('give an admin of the group: --admin email:password (or --admin-key)');
      const { NetworkSimulator } = await import('./domains/simulate/simulator.js');
      sim = new NetworkSimulator({
        baseUrl, groupId: o.group, adminAuth, ...(reader ? { planningAuth: reader } : {}), provision: o.provision ?? false, backfillDays: o.backfillDays, log,
        ...(o.vehicles !== undefined ? { vehicles: o.vehicles } : {}), ...(o.period !== undefined ? { period: o.period } : {}), ...(o.seed !== undefined ? { seed: o.seed } : {}),
        ...(routes ? { routes } : {}),
      });
    }
    const started = Date.now();
    await sim.start();
    const { batchLatencyMs: _l, ...stats } = sim.stats;
    console.error(`simulator: sent what was due in ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(stats)}`);
    if (o.once) return;
    sim.run();
    const stop = () => void sim.stop().then(() => process.exit(0));
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });

const user = program.command('user').description('user accounts');
user
  .command('create')
  .description('create a user account')
  .requiredOption('--email <email>', 'the login email')
  .option('--password-stdin', 'read the password from standard input')
  .option('--superuser', 'a superuser: creates groups and administers every group')
  .option('--organization <name>', 'the organization the account belongs to')
  .action(async (o: { email: string; passwordStdin?: boolean; superuser?: boolean; organization?: string }) => {
    if (!o.passwordStdin) throw new UsageError('give the password on standard input with --password-stdin (never on the command line)');
    const password = (await readStdin()).replace(/\r?\n$/, '');
    if (password.length < 8) throw new UsageError('the password must be at least 8 characters long');
    await withDatabase(async (db, c, ctx) => {
      const created = await createUser(ctx, { email: o.email, password, superuser: o.superuser ?? false, organization: o.organization ?? null });
      if (!created) throw new UsageError(`a user with email ${o.email} already exists`);
      console.log(JSON.stringify({ user_id: created.user_id, email: created.email, superuser: o.superuser ?? false }));
    });
  });

const gtfs = program.command('gtfs').description('GTFS versions of a group (the scheduled side)');
gtfs
  .command('import')
  .description('import a GTFS zip as a new version of the group (one transaction: a refused feed leaves nothing)')
  .requiredOption('--group <group_id>', 'the group')
  .option('--name <name>', 'a name for the version (default: feed_info feed_version, or the date)')
  .option('--publish', 'publish the version in the same transaction')
  .argument('<file.zip>', 'the GTFS feed')
  .action(async (file: string, o: { group: string; name?: string; publish?: boolean }) => {
    await withDatabase(async (db, c, ctx) => {
      const bar = new cliProgress.SingleBar(
        { format: '{bar} {percentage}% | {file} | {rows} rows, {speed} rows/s | {duration_formatted}', stream: process.stderr, hideCursor: true, etaBuffer: 50 },
        cliProgress.Presets.shades_classic,
      );
      const started = Date.now();
      bar.start(1, 0, { file: '', rows: 0, speed: 0 });
      let result;
      try {
        result = await importGtfs(ctx, o.group, file, {
          name: o.name,
          publish: o.publish ?? false,
          onProgress: (p) => {
            bar.setTotal(p.totalBytes);
            bar.update(p.bytes, { file: p.file, rows: p.rows, speed: Math.round(p.rows / Math.max(0.001, (Date.now() - started) / 1000)) });
          },
        });
        bar.update(bar.getTotal());
      } finally {
        bar.stop();
      }
      console.log(JSON.stringify(result, null, 2));
    });
  });
gtfs
  .command('publish')
  .description('make a version the group\'s published GTFS from now on')
  .requiredOption('--group <group_id>', 'the group')
  .argument('<gtfs_id>', 'the version, as listed by `transit-ops gtfs list`')
  .action(async (gtfsId: string, o: { group: string }) => {
    await withDatabase(async (db, c, ctx) => console.log(JSON.stringify(await publishGtfs(ctx, o.group, gtfsId, null), null, 2)));
  });
gtfs
  .command('list')
  .description('the GTFS versions of a group, latest import first')
  .requiredOption('--group <group_id>', 'the group')
  .action(async (o: { group: string }) => {
    await withDatabase(async (db) => console.log(JSON.stringify(await listVersions(db, o.group), null, 2)));
  });

program
  .command('rail-stations')
  .description('the rail-station referential (open data, shared by every group)')
  .command('import')
  .description('insert or update stations from a CSV file (`;` separator, header: station_id or id; name; code or uic; country; lat or latitude; lon or longitude)')
  .argument('<file.csv>', 'the referential')
  .action(async (file: string) => {
    const text = await readFile(file);
    await withDatabase(async (db, c, ctx) => console.log(JSON.stringify(await importStations(ctx, text))));
  });

class UsageError extends Error {}

/** Errors the services raise for bad input: their message, and the list they carry. */
function explain(err: HttpError | ValidationError): string {
  if (err instanceof ValidationError) return ['the input is refused:', ...err.issues.map((i) => `  ${i.loc.join(':')}: ${i.msg}`)].join('\n');
  const listed = (err.extra['errors'] as { file: string; line: number | null; field: string | null; message: string }[] | undefined) ?? [];
  const lines = listed.map((e) => `  ${e.file}${e.line ? `:${e.line}` : ''}${e.field ? ` ${e.field}` : ''}: ${e.message}`);
  const total = err.extra['error_count'] as number | undefined;
  if (total !== undefined && total > listed.length) lines.push(`  … and ${total - listed.length} more`);
  return [err.message, ...lines].join('\n');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof UsageError) {
    console.error(`transit-ops: ${err.message}`);
    process.exit(2);
  }
  if (err instanceof HttpError || err instanceof ValidationError) {
    console.error(`transit-ops: ${explain(err)}`);
    process.exit(1);
  }
  console.error(err);
  process.exit(1);
});
