import type { FastifyInstance } from 'fastify';
import { startModelJob } from './model.js';
import { startSampleJob } from './samples.js';

/**
 * The prediction model job (PREDICTIONS_JOB) and the sampler of the published predictions
 * (PREDICTION_SAMPLES_JOB) run with the application, and stop with it.
 */
export async function predictionJob(app: FastifyInstance) {
  if (app.ctx.config.predictions.job) app.addHook('onClose', startModelJob(app.ctx));
  if (app.ctx.config.predictionSamples.job) app.addHook('onClose', startSampleJob(app.ctx));
}
