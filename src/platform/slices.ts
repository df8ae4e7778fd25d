/**
 * Long synchronous work in slices: the service has one JavaScript thread, and every request
 * (a feed answered from memory, a device batch, a trip object) waits behind whatever holds it.
 * A loop over a whole network (a tracking round's trips, a feed snapshot's trips) calls the
 * function `slices()` returns once per item: after SLICE_MS of work it gives the event loop back,
 * then goes on when its next turn comes.
 *
 * The turns are one lane for the whole service (`nextTurn`): the sliced work waiting goes on one
 * slice per turn of the event loop, first come first served, and the requests and I/O callbacks
 * waiting run between two. Without the lane, every sliced loop under way (a feed rebuild, a
 * tracking round, the predictions, a CSV import) took its slice in the same turn, and a request
 * waited for one slice of each (what it changed in bench:network: docs/operations.md §8).
 */
import { performance } from 'node:perf_hooks';

/** Work between two turns of the event loop, in milliseconds. */
export const SLICE_MS = 10;

/** The sliced work waiting for its turn, oldest first. A `next` is queued with setImmediate exactly while it is not empty. */
const lane: (() => void)[] = [];

/** Gives the next waiting slice its turn, and asks for the following one at the next turn of the loop. */
function next() {
  const go = lane.shift()!;
  // Queued from a setImmediate callback, the next one runs at the next turn, after the I/O waiting.
  if (lane.length > 0) setImmediate(next);
  go();
}

/** Resolves at this work's next turn of the event loop: after the I/O waiting and the sliced work queued before it. */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    if (lane.push(resolve) === 1) setImmediate(next);
  });
}

export function slices(sliceMs = SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return nextTurn().then(() => {
      since = performance.now();
    });
  };
}
