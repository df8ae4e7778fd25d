import type { FastifyInstance } from 'fastify';
import { gtfsRtRoutes } from './gtfs-rt/routes.js';
import { siriRoutes } from './siri/routes.js';

/** Passenger information: GTFS-Realtime and SIRI, served from one per-group cache (cache.ts; a service of buildApp). */
export async function feedRoutes(app: FastifyInstance) {
  const cache = app.ctx.services.feeds;
  gtfsRtRoutes(app, cache);
  siriRoutes(app, cache);
}
