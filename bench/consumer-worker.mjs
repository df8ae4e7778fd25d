/**
 * bench:network's consumers: the timed GETs of the feed consumer, the feed-lag probe and the trip
 * object reader, made on this worker thread's own event loop, and what the consumer does with an
 * answer (inflating it, scanning a GTFS-Realtime feed for what it reads: gtfs-rt-scan.mjs) done here too. The bench's main thread
 * also runs the simulator (418 vehicles to thousands): its holds would count in every latency
 * measured there, and a city's feeds (a 12 MB trip-updates read every 5 s; of its 180 MB
 * SIRI estimated timetable only the start is inflated: bodyOf) would hold it and delay the
 * devices' sends.
 *
 * Asked { id, url, headers, digest }, answers { id, status, ms, endedAt, wireBytes, bodyBytes }
 * and, by `digest`: 'vehicle-positions' { header, vehicles: [vehicle id, position time ms][] },
 * 'trip-updates' { header, trips: trip ids }, 'siri-et' { header: its ResponseTimestamp }; an answer other than 200 or 204 brings the start of
 * its body (`text`). `ms` is the time from the request to the last byte (the bytes as they came:
 * inflating is the consumer's own work, done after); `endedAt` when that byte came (epoch ms).
 * Plain JavaScript: a worker thread does not get the TypeScript loader of the bench's thread.
 */
import { Agent, get } from 'node:http';
import { parentPort } from 'node:worker_threads';
import { constants, gunzipSync } from 'node:zlib';
import { scanFeed } from './gtfs-rt-scan.mjs';
const agent = new Agent({ keepAlive: true });

/** The bytes of a document's start that hold its header (the SIRI ResponseTimestamp). */
const HEAD = 4096;

/**
 * What the consumer reads of an answer: its body whole, inflated if it came gzipped, or (`headOnly`)
 * only its first HEAD bytes, inflated from the start of the gzip stream, with its inflated size
 * from the gzip trailer (ISIZE: the size modulo 2^32, the whole size for a document under 4 GiB).
 * A city's SIRI timetable is 180 MB of XML: inflating it whole every 5 s took a sixth of a core of
 * the load generator (the profile of 2026-11-29), on the machine the service is measured on, for
 * a header the consumer reads in its first kilobyte.
 */
function bodyOf(wire, gzipped, headOnly) {
  if (!gzipped) return { head: headOnly ? wire.subarray(0, HEAD) : wire, bodyBytes: wire.length };
  if (!headOnly) {
    const body = gunzipSync(wire);
    return { head: body, bodyBytes: body.length };
  }
  // A stream cut short is read as far as it goes (no error for the missing end).
  const head = gunzipSync(wire.subarray(0, Math.min(wire.length, 64 * 1024)), { finishFlush: constants.Z_SYNC_FLUSH }).subarray(0, HEAD);
  return { head, bodyBytes: wire.length >= 18 ? wire.readUInt32LE(wire.length - 4) : 0 };
}

function digestOf(kind, body) {
  if (kind === 'siri-et') {
    // Its ResponseTimestamp, near the document's start (the journeys are not read).
    const at = /<ResponseTimestamp>([^<]+)<\/ResponseTimestamp>/.exec(body.subarray(0, HEAD).toString('utf8'));
    return at ? { header: Date.parse(at[1]) } : {};
  }
  if (kind !== 'vehicle-positions' && kind !== 'trip-updates') return {};
  return scanFeed(kind, body);
}

parentPort.on('message', ({ id, url, headers, digest, peek }) => {
  const t0 = performance.now();
  const fail = (err) => parentPort.postMessage({ id, error: err.message });
  const req = get(url, { agent, headers, timeout: 120_000 }, (res) => {
    if (peek) {
      // Its headers alone (ETag, Last-Modified): the body, if any, is not read (the connection is dropped).
      parentPort.postMessage({ id, status: res.statusCode ?? 0, ms: performance.now() - t0, endedAt: Date.now(), wireBytes: 0, bodyBytes: 0, etag: res.headers.etag, lastModified: res.headers['last-modified'] });
      res.destroy();
      return;
    }
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => {
      const ms = performance.now() - t0;
      const endedAt = Date.now();
      try {
        const wire = Buffer.concat(chunks);
        const status = res.statusCode ?? 0;
        const ok = status === 200 || status === 204;
        const { head, bodyBytes } = bodyOf(wire, res.headers['content-encoding'] === 'gzip', ok && digest === 'siri-et');
        parentPort.postMessage({
          id, status, ms, endedAt, wireBytes: wire.length, bodyBytes,
          ...(ok ? digestOf(digest, head) : { text: head.subarray(0, 200).toString() }),
        });
      } catch (err) {
        fail(err);
      }
    });
    res.on('error', fail);
  });
  req.on('timeout', () => req.destroy(new Error(`${url}: no answer in 120 s`)));
  req.on('error', fail);
});
