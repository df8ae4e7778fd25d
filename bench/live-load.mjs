// The load of bench/live.ts, in child processes. ROLE=clients: WebSocket subscribers that time
// every vehicle_position they receive from its `at` (1 ms histogram buckets), whether a frame holds
// one envelope or a batch of them: each frame is scanned for the beginning of every
// vehicle_position envelope and its `at`, without JSON.parse (what a client would spend parsing is
// not the server's). ROLE=vehicles: every vehicle sends one position per period through the device API,
// spread evenly over the period. Both report their own CPU time between 'reset' and 'report'.
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { WebSocket } from 'ws';

const args = JSON.parse(process.env.ARGS);
// Killed by the parent at the end: exit normally, so that `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
let cpu0 = process.cpuUsage();
const cpuMs = () => {
  const c = process.cpuUsage(cpu0);
  return (c.user + c.system) / 1000;
};

if (process.env.ROLE === 'clients') {
  const histogram = new Array(10_001).fill(0);
  let received = 0;
  let frames = 0;
  let closed = 0;
  let ready = 0;
  // Each frame is scanned as bytes, not made a string: Buffer.indexOf (a native search) finds each
  // envelope by its beginning, which holds its `at` (the server writes type, group_id, at first).
  const position = Buffer.from(`{"type":"vehicle_position","group_id":${JSON.stringify(args.groupId)},"at":"`);
  const subscribed = Buffer.from('"type":"subscribed"');
  // Date.parse of each `at` costs more than the rest of the scan: the minute ("2026-11-22T13:18")
  // is parsed once and compared byte by byte (the messages of a frame share it), the seconds and
  // milliseconds are read digit by digit.
  const minute = Buffer.alloc(16);
  let minuteMs = NaN;
  const timeOf = (data, a) => {
    let same = !Number.isNaN(minuteMs);
    for (let i = 15; same && i >= 0; i--) same = data[a + i] === minute[i];
    if (!same) {
      data.copy(minute, 0, a, a + 16);
      minuteMs = Date.parse(`${minute.toString('latin1')}:00.000Z`);
    }
    const d = (i) => data[a + i] - 48;
    return minuteMs + (d(17) * 10 + d(18)) * 1000 + d(20) * 100 + d(21) * 10 + d(22);
  };
  for (let i = 0; i < args.count; i++) {
    const ws = new WebSocket(args.url, { headers: { 'x-api-key': args.key } });
    ws.on('message', (data) => {
      const now = Date.now();
      frames++;
      let k = data.indexOf(position);
      if (k < 0) {
        if (data.includes(subscribed) && ++ready === args.count) process.send({ kind: 'ready' });
        return;
      }
      while (k >= 0) {
        const a = k + position.length;
        const latency = Math.max(0, now - timeOf(data, a));
        histogram[Math.min(10_000, latency)]++;
        received++;
        k = data.indexOf(position, a + 24);
      }
    });
    ws.on('close', () => closed++);
    ws.on('error', () => {});
    // connect in waves so the server's accept queue is not flooded
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 50));
  }
  process.on('message', (m) => {
    if (m === 'reset') {
      histogram.fill(0);
      received = 0;
      frames = 0;
      cpu0 = process.cpuUsage();
    } else if (m === 'report') process.send({ kind: 'done', histogram, received, frames, closed, cpuMs: cpuMs() });
  });
} else {
  const { url, keys, periodS, seconds } = args;
  const gap = (periodS * 1000) / keys.length;
  const started = Date.now();
  let requests = 0;
  let errors = 0;
  const latencies = [];
  const inFlight = new Set();
  let n = 0;
  process.on('message', (m) => {
    if (m === 'reset') cpu0 = process.cpuUsage();
    else if (m === 'report') process.send({ kind: 'cpu', cpuMs: cpuMs() });
  });
  // node:http with kept-alive connections: fetch (undici) cost this process twice the CPU, taken
  // from the server on a 2-core machine.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const post = (key, body) =>
    new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': key } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  const tick = async (i) => {
    const item = { id: randomUUID(), type: 'position', at: new Date().toISOString(), lat: 45.75 + (i % 100) / 1000, lon: 4.85, gps_valid: true, speed_kmh: 25, bearing: 90 };
    const t0 = performance.now();
    try {
      const status = await post(keys[i], JSON.stringify({ items: [item] }));
      if (status !== 200) {
        errors++;
        if (errors <= 3) console.error(`position refused: ${status}`);
      }
    } catch (err) {
      errors++;
      if (errors <= 3) console.error(`position failed: ${err.code ?? err.message}`);
    }
    requests++;
    latencies.push(performance.now() - t0);
  };
  // One position per vehicle per period, vehicle i at offset i × gap within the period.
  while (Date.now() - started < seconds * 1000) {
    const due = started + n * gap;
    const wait = due - Date.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const p = tick(n % keys.length);
    inFlight.add(p);
    p.finally(() => inFlight.delete(p));
    n++;
  }
  await Promise.all(inFlight);
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  process.send({ kind: 'sent', requests, errors, p50: pct(50), p99: pct(99) });
}
