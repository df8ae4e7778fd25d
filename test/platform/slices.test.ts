/**
 * Sliced work (src/platform/slices.ts) shares one lane of turns: whatever number of long loops are
 * under way, one slice runs per turn of the event loop, so what waits on the loop (a request, an
 * I/O callback) waits for one slice, not one slice of each loop. Measured by counting, not timing:
 * a probe re-queues itself with setImmediate, so it runs exactly once per turn of the loop, and
 * the slices run between two of its runs are counted. `slices(0)` yields after every item, so
 * every item is a slice.
 */
import { describe, expect, it } from 'vitest';
import { nextTurn, slices } from '../../src/platform/slices.js';

/** Runs `loops` loops of `items` items at once, each yielding after every item; records what ran, in order. */
async function run(loops: number, items: number) {
  const ran: string[] = [];
  let probing = true;
  const probe = () => {
    ran.push('turn');
    if (probing) setImmediate(probe);
  };
  setImmediate(probe);
  const loop = async (name: string) => {
    const turn = slices(0);
    for (let i = 0; i < items; i++) {
      ran.push(name);
      const wait = turn();
      if (wait) await wait;
    }
  };
  await Promise.all(Array.from({ length: loops }, (_, i) => loop(String.fromCharCode(65 + i))));
  probing = false;
  return ran;
}

describe('sliced work', () => {
  it('four loops under way run one slice per turn of the event loop between them, not one each', async () => {
    const ran = await run(4, 20);
    expect(ran.filter((r) => r !== 'turn')).toHaveLength(80);
    // The slices run between two turns (after each loop's first item, run when it starts).
    const between = ran.slice(4).join(' ').split('turn').map((s) => s.trim().split(' ').filter(Boolean).length);
    expect(Math.max(...between)).toBe(1);
  });

  it('the loops take their turns in order, first come first served (none waits behind another to its end)', async () => {
    const ran = (await run(3, 5)).filter((r) => r !== 'turn');
    expect(ran.join('')).toBe('ABC' + 'ABC'.repeat(4));
  });

  it('nextTurn lets the I/O and timers waiting run first', async () => {
    let timer = false;
    setTimeout(() => (timer = true), 0);
    // A busy millisecond, so the timer is due when the loop next runs its timers.
    for (const t = performance.now(); performance.now() - t < 2; );
    await nextTurn();
    await nextTurn();
    expect(timer).toBe(true);
  });
});
