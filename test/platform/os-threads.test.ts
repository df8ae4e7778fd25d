import { createRequire } from 'node:module';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { ownThreadId, threadTimes } from '../../src/platform/os-threads.js';

/** Busy on this thread for `ms` of wall time (never sleeping): on a CPU or waiting for one all along. */
function burn(ms: number): number {
  const t0 = performance.now();
  let x = 0;
  while (performance.now() - t0 < ms) x += Math.sqrt(x + 1);
  return x;
}

/** On a CPU plus waiting for one, in seconds, of the threads so named (undefined: none). */
function spent(thread: string): number | undefined {
  const t = threadTimes()?.find((x) => x.thread === thread);
  return t && t.cpuSeconds + t.waitSeconds;
}

/**
 * A worker thread that names itself `feeds` with nameThisThread (the module as the service's
 * threads load it, through tsx) and then burns what it is asked (ms of wall time), answering the
 * wall time it burnt.
 */
function namedWorker(): Worker {
  const tsx = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  const mod = new URL('../../src/platform/os-threads.ts', import.meta.url).href;
  return new Worker(
    `const { parentPort } = require('node:worker_threads');
     import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(mod)}); }).then(({ nameThisThread }) => {
       nameThisThread('feeds');
       parentPort.on('message', (ms) => {
         const t0 = performance.now();
         let x = 0;
         while (performance.now() - t0 < ms) x += Math.sqrt(x + 1);
         parentPort.postMessage(performance.now() - t0);
       });
       parentPort.postMessage('named');
     });`,
    { eval: true },
  );
}

describe.skipIf(process.platform !== 'linux')("the service's threads as Linux sees them (os-threads.ts)", () => {
  let worker: Worker | undefined;
  afterEach(async () => {
    await worker?.terminate();
    worker = undefined;
  });

  it("tells the service's own thread as main: its id is the process's, and its busy time is counted (within 10 %)", () => {
    expect(ownThreadId()).toBe(process.pid);
    const before = spent('main')!;
    const t0 = performance.now();
    burn(300);
    const wall = (performance.now() - t0) / 1000;
    const after = spent('main')!;
    expect(after - before).toBeGreaterThanOrEqual(0.9 * wall);
    // Only this thread's: not more than the wall time that passed (plus the kernel's accounting grain).
    expect(after - before).toBeLessThanOrEqual(wall + 0.05);
  });

  it('tells a thread that named itself apart from the others, its busy time counted as its own (within 10 %)', async () => {
    // No thread of this process is named so before the worker names itself.
    expect(spent('feeds')).toBeUndefined();
    worker = namedWorker();
    const [hello] = (await once(worker, 'message')) as [string];
    expect(hello).toBe('named');
    const before = spent('feeds');
    expect(before).toBeDefined();
    const mainBefore = spent('main')!;
    const t0 = performance.now();
    worker.postMessage(400);
    const [burnt] = (await once(worker, 'message')) as [number];
    const waited = (performance.now() - t0) / 1000;
    const after = spent('feeds')!;
    expect(after - before!).toBeGreaterThanOrEqual(0.9 * (burnt / 1000));
    expect(after - before!).toBeLessThanOrEqual(waited + 0.05);
    // The main thread slept meanwhile (awaiting the answer): the worker's busy time is not counted as main's.
    expect(spent('main')! - mainBefore).toBeLessThan(0.5 * (burnt / 1000));
  });

  it('gives every thread a CPU time and a wait, neither negative, main and the helpers among them', () => {
    const all = threadTimes()!;
    expect(all.map((t) => t.thread)).toEqual(expect.arrayContaining(['main', 'other']));
    for (const t of all) {
      expect(t.cpuSeconds).toBeGreaterThanOrEqual(0);
      expect(t.waitSeconds).toBeGreaterThanOrEqual(0);
    }
  });
});
