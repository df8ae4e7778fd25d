/**
 * /metrics in Prometheus text format: process metrics, a request histogram, what the passenger
 * feeds' rebuilds take, by part (feeds/cache.ts RebuildTimes: how far behind the reports the feeds
 * are is about `served` plus the refresh interval), and each thread's time on a CPU and waiting
 * for one (platform/os-threads.ts; Linux).
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { threadTimes, type ThreadTimes } from '../os-threads.js';

/**
 * A counter of each thread's ThreadTimes field, read from the kernel when scraped (not counted
 * here). Nothing where the kernel does not tell (not Linux).
 */
function threadCounter(registry: Registry, name: string, help: string, field: keyof Omit<ThreadTimes, 'thread'>) {
  return new Counter({
    name, help, labelNames: ['thread'] as const, registers: [registry],
    collect() {
      this.reset();
      for (const t of threadTimes() ?? []) this.inc({ thread: t.thread }, t[field]);
    },
  });
}

export async function metricsPlugin(app: FastifyInstance) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'transit_ops_' });
  const duration = new Histogram({
    name: 'transit_ops_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const rebuild = new Histogram({
    name: 'transit_ops_feed_rebuild_seconds',
    help: "A group's passenger-feed rebuild, by part: snapshot (reading the network), outputs (building those served with it), served (from its start to the new snapshot served), last (the outputs built after it: the SIRI timetable), total, idle (since the group's previous rebuild ended)",
    labelNames: ['part'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 60],
    registers: [registry],
  });
  threadCounter(
    registry, 'transit_ops_thread_cpu_seconds_total',
    "CPU time of the service's threads, by thread: main (requests, device reports), feeds (the passenger feeds' snapshots and outputs, PostgreSQL), tracking (trip tracking's rounds, PostgreSQL), other (V8's garbage collection and compilation helpers, libuv's pool). Linux only",
    'cpuSeconds',
  );
  threadCounter(
    registry, 'transit_ops_thread_wait_seconds_total',
    "Time the service's threads were ready to run but waited for a CPU, by thread (as transit_ops_thread_cpu_seconds_total): a thread that waits about as long as it runs is on a machine short of cores. Linux only",
    'waitSeconds',
  );
  app.ctx.services.feeds.onRebuilt((t) => {
    for (const part of ['snapshot', 'outputs', 'served', 'last', 'total'] as const) rebuild.observe({ part }, t[part]);
    if (t.idle !== undefined) rebuild.observe({ part: 'idle' }, t.idle);
  });
  app.addHook('onResponse', async (req, reply) => {
    duration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
