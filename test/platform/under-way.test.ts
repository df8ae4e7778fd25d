import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { UnderWay } from '../../src/platform/under-way.js';

/** A promise settled by hand. */
function held<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Whether `p` settled by the time the microtasks and a turn of the event loop ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true), () => (done = true));
  await turn();
  return done;
}

describe('UnderWay: the asks a thread works on, that background work waits for', () => {
  it('is not busy with nothing under way', () => {
    expect(new UnderWay().busy()).toBeUndefined();
  });

  it('is busy until every ask under way settled, with one promise for every caller meanwhile, and not after', async () => {
    const u = new UnderWay();
    const a = held<string>();
    const b = held<string>();
    const ta = u.track(a.promise);
    const tb = u.track(b.promise);
    const quiet = u.busy()!;
    expect(quiet).toBeDefined();
    expect(u.busy()).toBe(quiet);
    a.resolve('a');
    await expect(ta).resolves.toBe('a');
    expect(await settled(quiet)).toBe(false);
    b.resolve('b');
    await expect(tb).resolves.toBe('b');
    expect(await settled(quiet)).toBe(true);
    expect(u.busy()).toBeUndefined();
  });

  it('counts an ask that failed as over, and passes its failure on', async () => {
    const u = new UnderWay();
    const a = held();
    const ta = u.track(a.promise);
    const quiet = u.busy()!;
    a.reject(new Error('rebuild failed'));
    await expect(ta).rejects.toThrow('rebuild failed');
    expect(await settled(quiet)).toBe(true);
    expect(u.busy()).toBeUndefined();
  });

  it('is busy again, with a new promise, when an ask comes after a quiet spell', async () => {
    const u = new UnderWay();
    const first = held();
    void u.track(first.promise);
    const before = u.busy()!;
    first.resolve();
    await before;
    const second = held();
    void u.track(second.promise);
    const again = u.busy()!;
    expect(again).toBeDefined();
    expect(again).not.toBe(before);
    expect(await settled(again)).toBe(false);
    second.resolve();
    expect(await settled(again)).toBe(true);
  });
});
