#!/usr/bin/env node
/** The transit-ops command line: serve, migrate, and the provisioning commands. */
import { Command, Option } from 'commander';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { systemClock } from './platform/clock.js';
import type { AppContext } from './platform/context.js';
import { describeDatabase, openDatabase, type Db } from './platform/db/index.js';
import { migrate } from './platform/db/migrate.js';
import { bootstrapSuperuser, createUser } from './domains/users/service.js';
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

async function withDatabase<T>(fn: (db: Db, c: Config) => Promise<T>): Promise<T> {
  const c = config();
  const db = await openDatabase(c);
  try {
    await migrate(db);
    return await fn(db, c);
  } finally {
    await db.close();
  }
}

function cliContext(c: Config, db: Db): AppContext {
  return { config: c, db, clock: systemClock, log: pino({ level: c.logLevel === 'silent' ? 'silent' : 'warn' }) };
}

program
  .command('serve')
  .description('run the HTTP service (migrates the database first)')
  .action(async () => {
    const c = config();
    const db = await openDatabase(c);
    const { applied } = await migrate(db);
    const app = await buildApp({ config: c, db });
    if (applied.length > 0) app.log.info({ migrations: applied.map((m) => `${m.version} ${m.name}`) }, 'database migrated');
    const superuser = await bootstrapSuperuser(app.ctx);
    if (superuser === 'created') app.log.info({ email: c.superuserEmail }, 'superuser created');

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
      ].join('\n'),
    );
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
    await withDatabase(async (db, c) => {
      const created = await createUser(cliContext(c, db), { email: o.email, password, superuser: o.superuser ?? false, organization: o.organization ?? null });
      if (!created) throw new UsageError(`a user with email ${o.email} already exists`);
      console.log(JSON.stringify({ user_id: created.user_id, email: created.email, superuser: o.superuser ?? false }));
    });
  });

class UsageError extends Error {}

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
  console.error(err);
  process.exit(1);
});
