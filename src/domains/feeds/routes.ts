import type { FastifyInstance } from 'fastify';
import { feedCacheOf } from './cache.js';
import { gtfsRtRoutes } from './gtfs-rt/routes.js';
import { siriRoutes } from './siri/routes.js';

/** Passenger information: GTFS-Realtime and SIRI, served from one per-group cache (cache.ts). */
export async function feedRoutes(app: FastifyInstance) {
  const cache = feedCacheOf(app.ctx);
  // A rebuild under way finishes before the database closes.
  app.addHook('onClose', async () => cache.idle());
  gtfsRtRoutes(app, cache);
  siriRoutes(app, cache);
}
