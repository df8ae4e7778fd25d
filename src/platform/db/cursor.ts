/**
 * Server-side cursor streaming shared by both engines: inside a transaction of its own,
 * DECLARE a cursor, FETCH batches and hand each to the consumer only when it asks for the
 * next one (backpressure), so memory holds one batch whatever the result size.
 */
export type RunQuery = <R>(text: string, params?: readonly unknown[]) => Promise<R[]>;

export function cursorStream<R>(
  inTransaction: (body: (run: RunQuery) => Promise<void>) => Promise<void>,
  text: string,
  params: readonly unknown[],
  batchSize: number,
): AsyncIterable<R[]> {
  return pump<R[]>((push) =>
    inTransaction(async (run) => {
      await run('DECLARE transit_ops_cursor NO SCROLL CURSOR FOR ' + text, params);
      for (;;) {
        const rows = await run<R>(`FETCH ${Math.max(1, Math.floor(batchSize))} FROM transit_ops_cursor`);
        if (rows.length === 0) break;
        if (!(await push(rows))) break;
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
