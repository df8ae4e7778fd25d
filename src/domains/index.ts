import type { FastifyInstance } from 'fastify';
import { authRoutes, navDataProcessorRoutes } from './auth/routes.js';
import { deviceRoutes } from './device/routes.js';
import { dutyRoutes } from './duties/routes.js';
import { feedRoutes } from './feeds/routes.js';
import { fleetRoutes } from './fleet/routes.js';
import { groupRoutes } from './groups/routes.js';
import { liveRoutes } from './live/routes.js';
import { gtfsRoutes } from './gtfs/routes.js';
import { onDemandRoutes } from './gtfs/on-demand/routes.js';
import { railRoutes } from './gtfs/rail/routes.js';
import { liveMapPage, liveMapRoutes } from './livemap/routes.js';
import { movementRoutes } from './device/movements/routes.js';
import { notificationRoutes } from './notifications/routes.js';
import { planningRoutes } from './planning/routes.js';
import { predictionJob } from './predictions/job.js';
import { predictionRoutes } from './predictions/routes.js';
import { ratingRoutes } from './ratings/routes.js';
import { scheduleRoutes } from './schedule/routes.js';
import { tripRoutes } from './trips/routes.js';
import { updateRoutes } from './updates/routes.js';
import { userRoutes } from './users/routes.js';

type Plugin = (app: FastifyInstance) => Promise<void>;

/** Each domain is a Fastify plugin registered under /api/v4 (the other versions are rewritten to it). */
export const apiDomains: readonly Plugin[] = [
  authRoutes, groupRoutes, userRoutes, gtfsRoutes, onDemandRoutes, railRoutes, fleetRoutes, planningRoutes, ratingRoutes,
  notificationRoutes, tripRoutes, deviceRoutes, dutyRoutes, movementRoutes, updateRoutes, liveRoutes,
  liveMapRoutes, feedRoutes, predictionRoutes, scheduleRoutes,
];

/** Domains with paths outside /api/v4. */
export const rootDomains: readonly Plugin[] = [navDataProcessorRoutes, liveMapPage, predictionJob];
