/**
 * The service's logs: JSON lines (pino) for machines, or one readable line per request for a
 * person running `npm start` in a terminal.
 *
 * LOG_FORMAT=auto (the default) picks `pretty` when standard output is a terminal and `json`
 * otherwise (a container, systemd, a pipe to a log shipper). In the pretty form Fastify's two lines
 * per request ("incoming request", "request completed") become one, written when the answer has
 * gone: `GET /api/v4/groups/demo/trips 200 12.4 ms`. Credentials are redacted in both forms.
 */
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import pretty from 'pino-pretty';
import type { LogFormat, LogLevel } from '../../config.js';

const REDACT = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]'];

/** Whether the logs are written for a person (a terminal) or for a machine. */
export function resolveLogFormat(format: LogFormat, isTty = process.stdout.isTTY === true): 'json' | 'pretty' {
  return format === 'auto' ? (isTty ? 'pretty' : 'json') : format;
}

/** Fastify's logger options, and whether Fastify's own request lines are replaced by ours. */
export function loggerOptions(level: LogLevel, format: 'json' | 'pretty', destination?: NodeJS.WritableStream): Pick<FastifyServerOptions, 'logger' | 'disableRequestLogging'> {
  if (format === 'json') return { logger: { level, redact: REDACT } };
  const colorize = destination === undefined && process.stdout.isTTY === true;
  const stream = pretty({ colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,reqId', singleLine: true, ...(destination ? { destination, sync: true } : {}) });
  return { logger: { level, redact: REDACT, stream }, disableRequestLogging: true };
}

/** The one line per request of the pretty form. */
export function logRequestLines(app: FastifyInstance): void {
  app.addHook('onResponse', async (req, reply) => {
    const line = `${req.method} ${req.url} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)} ms`;
    if (reply.statusCode >= 500) req.log.error(line);
    else req.log.info(line);
  });
}
