/**
 * Long synchronous work in slices: the service has one JavaScript thread, and every request
 * (a feed answered from memory, a device batch, a trip object) waits behind whatever holds it.
 * A loop over a whole network (a tracking round's trips, a feed snapshot's trips) calls the
 * function `slices()` returns once per item: after SLICE_MS of work it gives the event loop back
 * (setImmediate: the requests and I/O callbacks waiting run first), then goes on.
 */
import { performance } from 'node:perf_hooks';

/** Work between two turns of the event loop, in milliseconds. */
export const SLICE_MS = 10;

export function slices(sliceMs = SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}
