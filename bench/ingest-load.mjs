// The load generator of bench/ingest.ts (a worker thread): devices send batches of positions and
// trip events over node:http with kept-alive connections (fetch cost about twice the CPU, taken
// from the server on this machine), in one of two modes:
// - `rate` set (open loop): a batch starts every batch/rate seconds whatever the answers, as
//   devices do; a batch's latency runs from the time it was due, so a server falling behind is
//   charged for the wait (no coordinated omission);
// - `rate` null (closed loop): `concurrency` requests at a time, as fast as the server answers
//   (the most the server can take; the latency is then mostly the queue of those requests).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { url, keys, seconds, concurrency, batch, rate } = workerData;
const clock = new Map();
const latencies = [];
const worst = [];
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

const agent = new http.Agent({ keepAlive: true, maxSockets: rate ? 256 : concurrency });
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

async function send(due) {
  const device = next++ % keys.length;
  const payload = body(device);
  const t0 = due ?? performance.now();
  const r = await post(keys[device], payload);
  const latency = performance.now() - t0;
  latencies.push(latency);
  // The worst latency of each second of the run (by start time): where the tail comes from.
  const second = Math.floor((t0 - started) / 1000);
  worst[second] = Math.max(worst[second] ?? 0, latency);
  if (r.status === 200) items += JSON.parse(r.body).accepted?.length ?? 0;
  else errors++;
}

async function closedLoop() {
  while (performance.now() < deadline) await send();
}

async function openLoop() {
  const every = (batch / rate) * 1000;
  const inflight = new Set();
  let due = started;
  while (due < deadline) {
    // Every batch due by now starts now (a late timer catches up), timed from when it was due.
    const now = performance.now();
    for (; due <= now && due < deadline; due += every) {
      const p = send(due).finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
  }
  await Promise.all(inflight);
}

await (rate ? openLoop() : Promise.all(Array.from({ length: concurrency }, closedLoop)));
agent.destroy();
const elapsed = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
parentPort.postMessage({ items, errors, batches: latencies.length, elapsed, p50: pct(50), p95: pct(95), p99: pct(99), worst: Array.from(worst, (w) => Math.round(w ?? 0)) });
