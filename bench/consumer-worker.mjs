/**
 * bench:network's consumers: the timed GETs of the feed consumer and of the trip object reader,
 * made on this worker thread's own event loop. The bench's main thread also runs the simulator
 * (418 vehicles to thousands), whose holds (p99 above 100 ms) would count in every latency it
 * measured, as if the passengers' apps ran on the devices' server. Asked { id, url, headers },
 * answers { id, status, encoding, wire, ms }: the bytes as they came (gzip not inflated: that
 * is the consumer's own work) and the time from the request to the last byte. Plain JavaScript:
 * a worker thread does not get the TypeScript loader of the bench's thread.
 */
import { Agent, get } from 'node:http';
import { parentPort } from 'node:worker_threads';

const agent = new Agent({ keepAlive: true });

parentPort.on('message', ({ id, url, headers }) => {
  const t0 = performance.now();
  const fail = (err) => parentPort.postMessage({ id, error: err.message });
  const req = get(url, { agent, headers, timeout: 120_000 }, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => {
      const ms = performance.now() - t0;
      const wire = new Uint8Array(Buffer.concat(chunks));
      parentPort.postMessage({ id, status: res.statusCode ?? 0, encoding: res.headers['content-encoding'], wire, ms }, [wire.buffer]);
    });
    res.on('error', fail);
  });
  req.on('timeout', () => req.destroy(new Error(`${url}: no answer in 120 s`)));
  req.on('error', fail);
});
