/**
 * The work a thread does for someone who waits on it (a client's ask), counted while under way,
 * so that background work on the same thread goes on in between (the feeds' worker: the
 * prediction sampler's round waits while a rebuild, an output, the positions or a stop's visits
 * are built; predictions/samples.ts recordSamples `busy`).
 */
export class UnderWay {
  private count = 0;
  private quiet: { promise: Promise<void>; resolve: () => void } | undefined;

  /** `work`, counted as under way until it settles (resolved or rejected: its outcome is passed on as it is). */
  track<T>(work: Promise<T>): Promise<T> {
    this.count++;
    return work.finally(() => {
      if (--this.count > 0) return;
      this.quiet?.resolve();
      this.quiet = undefined;
    });
  }

  /** Undefined when nothing is under way; else a promise resolved once nothing is (the same for every caller meanwhile). */
  busy(): Promise<void> | undefined {
    if (this.count === 0) return undefined;
    if (!this.quiet) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.quiet = { promise, resolve };
    }
    return this.quiet.promise;
  }
}
