/**
 * FEEDS_KEEP_FRESH (feeds/cache.ts): while a group's feeds are asked for, its snapshot is rebuilt
 * once stale without waiting for a request, so a consumer polling slowly is answered from a
 * snapshot of the last interval, not from the one its previous request started. The service's
 * clock is the test's (held between its moves); the cache's timer is real and waited for, never
 * raced: each assertion waits for the state it names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT_IDLE_MS } from '../../src/domains/feeds/cache.js';
import { engine } from '../helpers/db.js';
import { eventually, feedFixture, readFeed, secs, type FeedFixture } from './fixture.js';

// On the feeds' worker thread too (PostgreSQL): the cache decides when, whichever thread builds.
describe.each(engine === 'postgres' ? (['off', 'on'] as const) : (['off'] as const))('feeds kept fresh, FEEDS_WORKER=%s', (worker) => {
  let f: FeedFixture;
  let rebuilds = 0;
  beforeAll(async () => {
    f = await feedFixture({ config: { feeds: { refreshSeconds: 1, staleVehicleSeconds: 300, etHorizonMinutes: 60, etRefreshSeconds: 0, keepFresh: true, worker } } });
    f.t.ctx.services.feeds.onRebuilt(() => rebuilds++);
  });
  afterAll(async () => f?.t.close());

  it('rebuilds a stale snapshot without a request while its feeds are asked for, and answers the next request from it', async () => {
    const first = await readFeed(f, 'vehicle-positions');
    expect(first.message!.header.timestamp).toBe(secs(f.clock.now().toISOString()));
    await eventually(async () => rebuilds === 1 && f.t.ctx.services.feeds.keptFresh(f.g), 'the first build, and the next one set');
    f.clock.advance(2000);
    // No request: the cache's own timer sees the snapshot stale on the service's clock.
    await eventually(async () => rebuilds === 2, 'a rebuild without a request');
    const next = await readFeed(f, 'vehicle-positions');
    // On request only (FEEDS_KEEP_FRESH off), this answer would be the first snapshot, 2 s old.
    expect(next.message!.header.timestamp).toBe(secs(f.clock.now().toISOString()));
    expect(next.headers['age']).toBe('0');
  });

  it('stops once no feed of the group was asked for within OUTPUT_IDLE_MS', async () => {
    await eventually(async () => f.t.ctx.services.feeds.keptFresh(f.g), 'the next rebuild set');
    const before = rebuilds;
    f.clock.advance(OUTPUT_IDLE_MS + 2000);
    // The timer fires (an interval of real time), finds nothing asked for lately, and sets none.
    await eventually(async () => !f.t.ctx.services.feeds.keptFresh(f.g) && !f.t.ctx.services.feeds.rebuilding(f.g), 'no rebuild set any more');
    expect(rebuilds).toBe(before);
  });
});
