import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Clock } from './clock.js';
import type { Db } from './db/index.js';
import type { Access, GroupScope, Principal } from './http/access.js';
import type { Partitions } from './db/partitions.js';
import type { Lifecycle } from './lifecycle.js';
import type { LiveOutbox } from '../domains/device/live.js';
import type { DutyDerivation } from '../domains/duties/service.js';
import type { FeedCache } from '../domains/feeds/cache.js';
import type { LiveHub } from '../domains/live/hub.js';
import type { Tracking } from '../domains/trips/tracking.js';

/** What every service receives: no HTTP in here, so the CLI and the simulator reuse services. */
export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  /** What runs in this app besides its requests: made, started and closed by buildApp (appContext in app.ts). */
  services: Services;
}

/** The background work of an app, one object each (see appContext in app.ts for what each does). */
export interface Services {
  partitions: Partitions;
  tracking: Tracking;
  /** The duties derived from a device's sign events, in ingest's transaction (no background work). */
  duties: DutyDerivation;
  outbox: LiveOutbox;
  live: LiveHub;
  feeds: FeedCache;
  /** The list of them, in start order: started when the app is ready, closed in reverse order when it closes. */
  lifecycle: Lifecycle;
}

/** Every registered route, for the inventory and authorization-matrix tests. */
export interface RouteEntry {
  method: string;
  url: string;
  access: Access | undefined;
  schema: Record<string, unknown> | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
    routeTable: readonly RouteEntry[];
  }
  interface FastifyRequest {
    principal: Principal | null;
    groupScope: GroupScope | null;
  }
  interface FastifyContextConfig {
    access?: Access;
  }
}
