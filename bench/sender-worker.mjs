/**
 * bench:network's devices' sender: the simulator's batches (POST device/reports) posted and timed
 * on this worker thread's own event loop, over kept-alive connections. The bench's main thread
 * runs the simulator (thousands of vehicles' traffic model), whose holds would count in a batch's
 * latency timed there (the answer waits in the socket until that loop comes back to it); this
 * thread does nothing but the requests, as a device would, and times each from the moment its
 * body is written to the last byte of its answer.
 *
 * Asked { id, url, key, body } (body: the JSON text), answers { id, status, text, sentAt,
 * answeredAt, retryAfter } (epoch ms), or { id, error } when no answer came. Plain JavaScript: a
 * worker thread does not get the TypeScript loader of the bench's thread.
 */
import { Agent, request } from 'node:http';
import { parentPort } from 'node:worker_threads';

const agent = new Agent({ keepAlive: true });

parentPort.on('message', ({ id, url, key, body }) => {
  const fail = (err) => parentPort.postMessage({ id, error: err.message });
  const payload = Buffer.from(body);
  const req = request(url, {
    method: 'POST', agent, timeout: 120_000,
    headers: { 'content-type': 'application/json', 'content-length': payload.length, 'x-api-key': key },
  }, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => {
      const answeredAt = Date.now();
      parentPort.postMessage({
        id, status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), sentAt, answeredAt,
        retryAfter: Number(res.headers['retry-after'] ?? 60) || 60,
      });
    });
    res.on('error', fail);
  });
  req.on('timeout', () => req.destroy(new Error('no answer within 120 s')));
  req.on('error', fail);
  const sentAt = Date.now();
  req.end(payload);
});
