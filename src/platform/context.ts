import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Clock } from './clock.js';
import type { Db } from './db/index.js';
import type { Access, GroupScope, Principal } from './http/access.js';

/** What every service receives: no HTTP in here, so the CLI and the simulator reuse services. */
export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
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
