// The load generator of bench/ingest.ts (a worker thread): devices send batches of positions and
// trip events as fast as the server answers, `concurrency` requests at a time, over node:http with
// kept-alive connections (fetch cost about twice the CPU, taken from the server on this machine).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { url, keys, seconds, concurrency, batch } = workerData;
const clock = new Map();
const latencies = [];
let items = 0;
let errors = 0;
let next = 0;
const started = performance.now();
const deadline = started + seconds * 1000;

function body(device) {
  let t = clock.get(device) ?? Date.parse('2026-06-01T05:00:00Z');
  const out = [];
  for (let i = 0; i < batch; i++) {
    t += 1000;
    const at = new Date(t).toISOString();
    const lat = 45.75 + (device % 100) / 1000 + i / 10000;
    const lon = 4.85 + Math.floor(device / 100) / 1000;
    out.push(
      i % 10 === 9
        ? { id: randomUUID(), type: 'trip_event', at, trip_id: `T${device}`, service_date: '2026-06-01', event: 'stop_passed', stop_id: `S${i}`, stop_sequence: i, lat, lon, gps_valid: true }
        : { id: randomUUID(), type: 'position', at, lat, lon, gps_valid: true, speed_kmh: 25, bearing: 90, trip_id: `T${device}`, service_date: '2026-06-01' },
    );
  }
  clock.set(device, t);
  return JSON.stringify({ items: out });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(url);

function post(key, payload) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-api-key': key } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function loop() {
  while (performance.now() < deadline) {
    const device = next++ % keys.length;
    const payload = body(device);
    const t0 = performance.now();
    const r = await post(keys[device], payload);
    latencies.push(performance.now() - t0);
    if (r.status === 200) items += JSON.parse(r.body).accepted?.length ?? 0;
    else errors++;
  }
}

await Promise.all(Array.from({ length: concurrency }, loop));
agent.destroy();
const elapsed = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
parentPort.postMessage({ items, errors, batches: latencies.length, elapsed, p50: pct(50), p95: pct(95), p99: pct(99) });
