import type { FastifyInstance } from 'fastify';
import { startModelJob } from './model.js';

/** The prediction model job runs with the application (PREDICTIONS_JOB), and stops with it. */
export async function predictionJob(app: FastifyInstance) {
  if (!app.ctx.config.predictions.job) return;
  const stop = startModelJob(app.ctx);
  app.addHook('onClose', stop);
}
