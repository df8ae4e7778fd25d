/** A test app on a fresh database, and factories that make its data. */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig, type Config } from '../../src/config.js';
import { systemClock, type Clock } from '../../src/platform/clock.js';
import type { AppContext } from '../../src/platform/context.js';
import type { Db } from '../../src/platform/db/index.js';
import type { Role } from '../../src/platform/http/access.js';
import { hashSecret, newSecret, objectId } from '../../src/platform/ids.js';
import { createGroup } from '../../src/domains/groups/service.js';
import { hashPassword } from '../../src/domains/auth/passwords.js';
import type { SerializerBuild } from '../../src/platform/http/serializers.js';
import { openTestDb, type TestDb } from './db.js';
import { checkResponses } from './response-check.js';

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  ctx: AppContext;
  testDb: TestDb;
  close(): Promise<void>;
}

/**
 * Whether test apps check every answer against its documented schema (response-check.ts): on for
 * the whole suite (it costs about 2 % of its time); CHECK_RESPONSES=0 turns it off for a run,
 * `checkResponses: false` for a file.
 */
const CHECK_ALL = process.env['CHECK_RESPONSES'] !== '0';

/**
 * A test app. Its response serializers are built on each route's first answer (serializers.ts), as
 * a file calls few of the routes; `serializers: 'eager'` builds them all at start, as the service does.
 */
export async function setup(
  o: { clock?: Clock; config?: Partial<Config>; extraRoutes?: (app: FastifyInstance) => void; checkResponses?: boolean; serializers?: SerializerBuild } = {},
): Promise<TestApp> {
  const testDb = await openTestDb();
  const config = testConfig(o.config);
  const check = o.checkResponses ?? CHECK_ALL;
  const app = await buildApp({ config, db: testDb.db, clock: o.clock ?? systemClock, logger: false, serializers: o.serializers ?? 'lazy', ...(check ? { beforeRoutes: checkResponses } : {}) });
  o.extraRoutes?.(app);
  await app.ready();
  return {
    app,
    db: testDb.db,
    ctx: app.ctx,
    testDb,
    close: async () => {
      await app.close();
      await testDb.drop();
    },
  };
}

let seq = 0;
export const uniq = (prefix: string) => `${prefix}${process.pid}x${++seq}`;

export async function newGroup(t: TestApp, o: { features?: string[]; timezone?: string; auth?: unknown; group_id?: string } = {}): Promise<string> {
  const group_id = o.group_id ?? uniq('g');
  await createGroup(t.ctx, {
    group_id,
    name: `Network ${group_id}`,
    features: (o.features ?? ['device_event_sourcing', 'on_demand', 'rail_data']) as never,
    timezone: o.timezone ?? 'Europe/Paris',
    ...(o.auth ? { auth: o.auth as never } : {}),
  });
  return group_id;
}

export async function newTeam(t: TestApp, groupId: string, teamId = uniq('team')): Promise<string> {
  await t.db.query('INSERT INTO teams (group_id, team_id, name) VALUES ($1, $2, $3)', [groupId, teamId, `Team ${teamId}`]);
  return teamId;
}

export interface TestUser {
  userId: string;
  email: string;
  password: string;
  token: string;
  /** Headers carrying the user's session as a bearer token. */
  auth: Record<string, string>;
}

/**
 * A user with a role in a group (or a superuser), and an open session. The session row is made
 * directly (a factory, like a real login would), which keeps argon2 out of most tests.
 */
export async function newUser(
  t: TestApp,
  o: { groupId?: string; role?: Role; teams?: string[]; superuser?: boolean; password?: string; driverId?: string; email?: string } = {},
): Promise<TestUser> {
  const userId = objectId();
  const email = o.email ?? `${uniq('user')}@example.org`;
  const password = o.password ?? 'correct horse battery';
  const hash = o.password ? await hashPassword(o.password) : null;
  await t.db.query('INSERT INTO users (user_id, email, password_hash, superuser, organization) VALUES ($1, $2, $3, $4, $5)', [userId, email, hash, o.superuser ?? false, 'Test Org']);
  if (o.groupId && o.role) {
    await t.db.query('INSERT INTO memberships (group_id, user_id, role, teams, driver_id, organization) VALUES ($1, $2, $3, $4, $5, $6)', [o.groupId, userId, o.role, o.teams ?? [], o.driverId ?? null, 'Test Org']);
  }
  const token = newSecret('');
  await t.db.query("INSERT INTO sessions (session_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '1 day')", [hashSecret(token), userId]);
  return { userId, email, password, token, auth: { authorization: `Bearer ${token}` } };
}

export async function inject(t: TestApp, opts: InjectOptions) {
  const res = await t.app.inject(opts);
  let json: unknown;
  try {
    json = res.json();
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body: res.body, json: json as any };
}
