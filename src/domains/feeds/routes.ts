import type { FastifyInstance } from 'fastify';
import { FeedCache } from './cache.js';
import { gtfsRtRoutes } from './gtfs-rt/routes.js';
import { siriRoutes } from './siri/routes.js';

/** Passenger information: GTFS-Realtime and SIRI, served from one per-group cache (cache.ts). */
export async function feedRoutes(app: FastifyInstance) {
  const cache = new FeedCache(app.ctx);
  gtfsRtRoutes(app, cache);
  siriRoutes(app, cache);
}
