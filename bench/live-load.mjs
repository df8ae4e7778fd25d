// The load of bench/live.ts, in child processes. ROLE=clients: WebSocket subscribers that time
// each vehicle_position from its `at` (1 ms histogram buckets); ROLE=vehicles: every vehicle
// sends one position per period through the device API, spread evenly over the period.
import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';

const args = JSON.parse(process.env.ARGS);

if (process.env.ROLE === 'clients') {
  const histogram = new Array(10_001).fill(0);
  let received = 0;
  let closed = 0;
  let ready = 0;
  const marker = '"at":"';
  for (let i = 0; i < args.count; i++) {
    const ws = new WebSocket(args.url, { headers: { 'x-api-key': args.key } });
    ws.on('message', (data) => {
      const now = Date.now();
      const text = data.toString();
      if (!text.startsWith('{"type":"vehicle_position"')) {
        if (text.startsWith('{"type":"subscribed"') && ++ready === args.count) process.send({ kind: 'ready' });
        return;
      }
      const k = text.indexOf(marker) + marker.length;
      const latency = Math.max(0, now - Date.parse(text.slice(k, k + 24)));
      histogram[Math.min(10_000, latency)]++;
      received++;
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
    } else if (m === 'report') process.send({ kind: 'done', histogram, received, closed });
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
  const tick = async (i) => {
    const item = { id: randomUUID(), type: 'position', at: new Date().toISOString(), lat: 45.75 + (i % 100) / 1000, lon: 4.85, gps_valid: true, speed_kmh: 25, bearing: 90 };
    const t0 = performance.now();
    try {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': keys[i] }, body: JSON.stringify({ items: [item] }) });
      await r.arrayBuffer();
      if (r.status !== 200) {
        errors++;
        if (errors <= 3) console.error(`position refused: ${r.status}`);
      }
    } catch (err) {
      errors++;
      if (errors <= 3) console.error(`position failed: ${err.cause?.code ?? err.message}`);
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
