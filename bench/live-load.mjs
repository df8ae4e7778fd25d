// The load of bench/live.ts, in child processes. ROLE=clients: WebSocket subscribers that time
// every vehicle_position they receive from its `at` (1 ms histogram buckets), whether a frame holds
// one envelope or a batch of them: each frame is scanned for every vehicle_position envelope and
// the `"at":"` that follows it, without JSON.parse (what a client would spend parsing is not the
// server's). ROLE=vehicles: every vehicle sends one position per period through the device API,
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
  const position = '{"type":"vehicle_position","group_id":"';
  const marker = '"at":"';
  // Date.parse of each `at` costs more than the rest of the scan: the minute is parsed once (they
  // share it), the seconds and milliseconds read digit by digit (no string made).
  let minute = '';
  let minuteMs = 0;
  const digit = (text, i) => text.charCodeAt(i) - 48;
  const timeOf = (text, a) => {
    if (!text.startsWith(minute, a) || minute === '') {
      minute = text.slice(a, a + 16);
      minuteMs = Date.parse(`${minute}:00.000Z`);
    }
    return minuteMs + (digit(text, a + 17) * 10 + digit(text, a + 18)) * 1000 + digit(text, a + 20) * 100 + digit(text, a + 21) * 10 + digit(text, a + 22);
  };
  for (let i = 0; i < args.count; i++) {
    const ws = new WebSocket(args.url, { headers: { 'x-api-key': args.key } });
    ws.on('message', (data) => {
      const now = Date.now();
      frames++;
      // latin1: one byte a character, the cheapest decoding; the markers and times are ASCII.
      const text = data.toString('latin1');
      let k = text.indexOf(position);
      if (k < 0) {
        if (text.includes('"type":"subscribed"') && ++ready === args.count) process.send({ kind: 'ready' });
        return;
      }
      while (k >= 0) {
        const a = text.indexOf(marker, k + position.length) + marker.length;
        const latency = Math.max(0, now - timeOf(text, a));
        histogram[Math.min(10_000, latency)]++;
        received++;
        k = text.indexOf(position, a);
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
