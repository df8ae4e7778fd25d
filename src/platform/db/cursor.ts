/**
 * Server-side cursor streaming shared by both engines: inside a transaction of its own,
 * DECLARE a cursor and FETCH batches. The next batch is fetched while the consumer handles the
 * current one (the database works while Node does), and no further one until the consumer asks
 * (backpressure): memory holds two batches whatever the result size.
 */
export type RunQuery = <R>(text: string, params?: readonly unknown[]) => Promise<R[]>;

export function cursorStream<R>(
  inTransaction: (body: (run: RunQuery) => Promise<void>) => Promise<void>,
  text: string,
  params: readonly unknown[],
  batchSize: number,
): AsyncIterable<R[]> {
  const size = Math.max(1, Math.floor(batchSize));
  return pump<R[]>((push) =>
    inTransaction(async (run) => {
      await run('DECLARE transit_ops_cursor NO SCROLL CURSOR FOR ' + text, params);
      const fetch = () => {
        const rows = run<R>(`FETCH ${size} FROM transit_ops_cursor`);
        // Awaited below; until then a failure must not count as unhandled.
        rows.catch(() => undefined);
        return rows;
      };
      let next = fetch();
      for (;;) {
        const rows = await next;
        if (rows.length === 0) break;
        // A short batch is the last one: no need to ask again.
        next = rows.length < size ? Promise.resolve([]) : fetch();
        if (!(await push(rows))) {
          await next;
          break;
        }
      }
      await run('CLOSE transit_ops_cursor');
    }),
  );
}

/**
 * Turns a producer that pushes items (and waits for each to be taken) into an async iterable.
 * `push` resolves true when the consumer took the item, false when it stopped iterating.
 */
export async function* pump<T>(producer: (push: (item: T) => Promise<boolean>) => Promise<void>): AsyncGenerator<T> {
  let offered: { item: T; ack: (more: boolean) => void } | undefined;
  let wake: (() => void) | undefined;
  let finished = false;
  let failure: { error: unknown } | undefined;
  let stopped = false;

  const push = (item: T) =>
    new Promise<boolean>((ack) => {
      if (stopped) return ack(false);
      offered = { item, ack };
      wake?.();
    });
  const running = producer(push).then(
    () => {
      finished = true;
      wake?.();
    },
    (error: unknown) => {
      failure = { error };
      finished = true;
      wake?.();
    },
  );

  let taken: { item: T; ack: (more: boolean) => void } | undefined;
  try {
    for (;;) {
      if (offered) {
        taken = offered;
        offered = undefined;
        yield taken.item;
        const t = taken;
        taken = undefined;
        t.ack(true);
        continue;
      }
      if (finished) {
        if (failure) throw failure.error;
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    stopped = true;
    taken?.ack(false);
    offered?.ack(false);
    await running;
  }
}
