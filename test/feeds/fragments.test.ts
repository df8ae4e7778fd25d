import { randomBytes } from 'node:crypto';
import { crc32, createGunzip, gunzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { assemble, crc32Combine, piece, TripPieces } from '../../src/domains/feeds/fragments.js';
import { estimatedTimetableOutput } from '../../src/domains/feeds/siri/build.js';
import { tripUpdatesMessage, tripUpdatesOutput } from '../../src/domains/feeds/gtfs-rt/feeds.js';
import GtfsRealtimeBindings from 'gtfs-realtime-bindings';
import type { NetworkNow } from '../../src/domains/feeds/network.js';

/** Text that does not compress: random characters, some of them of two, three and four bytes in UTF-8. */
const noise = (n: number) => Array.from(randomBytes(n), (b) => (b < 200 ? String.fromCharCode(32 + (b % 90)) : b < 230 ? 'é' : b < 250 ? '€' : '🚌')).join('');

describe('an output assembled from pieces', () => {
  it("combines two CRC-32s into the CRC-32 of the bytes joined, as zlib computes it over them, whatever the lengths (0, 1, 2^k, odd, a megabyte)", () => {
    for (const [m, n] of [[0, 0], [0, 5], [5, 0], [1, 1], [13, 1024], [4096, 77], [100_003, 1 << 20]] as const) {
      const a = randomBytes(m);
      const b = randomBytes(n);
      expect(crc32Combine(crc32(a), crc32(b), n)).toBe(crc32(Buffer.concat([a, b])));
    }
  });

  it('gunzips to the pieces joined, read at once or as a stream, whatever the pieces (empty, tiny, incompressible, multi-byte, large), its size theirs', async () => {
    const texts = ['', '<', noise(70_000), '<Call>x</Call>'.repeat(20_000), noise(3), 'é🚌 end'];
    const { size, gzip } = await assemble([texts.map(piece)]);
    const body = Buffer.from(texts.join(''));
    expect(size).toBe(body.length);
    expect(gunzipSync(gzip).equals(body)).toBe(true);
    expect((await buffer(Readable.from([gzip]).pipe(createGunzip()))).equals(body)).toBe(true);
  });

  it('reassembled with pieces changed, added and removed, still gunzips to its body (deflated forms reused only after the same piece)', async () => {
    const journey = (i: number, late = 0) => piece(`<Journey><Ref>T${i}</Ref>${Array.from({ length: 30 }, (_, k) => `<Call><Stop>S${k}</Stop><Expected>08:${10 + k}:${late}</Expected></Call>`).join('')}</Journey>`);
    const first = Array.from({ length: 50 }, (_, i) => journey(i));
    await assemble([first]);
    const second = [...first.slice(0, 10), journey(10, 30), ...first.slice(11, 20), ...first.slice(21), journey(99)];
    const { gzip, deflated } = await assemble([second]);
    expect(gunzipSync(gzip).toString('utf8')).toBe(second.map((p) => p.text).join(''));
    // Journey 10 changed and the one after it, journey 21 after journey 19, journey 99 new.
    expect(deflated).toBe(4);
  });

  it('deflates again a changed piece and the piece after it in its run, not the first piece of the next run, and gunzips to the runs joined', async () => {
    const journey = (run: number, i: number, late = 0) => piece(`<Journey><Ref>V${run}-${i}</Ref>${Array.from({ length: 30 }, (_, k) => `<Call><Stop>S${k}</Stop><Expected>08:${10 + k}:${late}</Expected></Call>`).join('')}</Journey>`);
    const runs = Array.from({ length: 4 }, (_, r) => Array.from({ length: 3 }, (_, i) => journey(r, i)));
    expect((await assemble(runs)).deflated).toBe(12);
    expect((await assemble(runs)).deflated).toBe(0);
    // The last journey of run 1 changed: itself only (run 2's first piece has no dictionary).
    const moved = runs.map((run, r) => (r === 1 ? [...run.slice(0, 2), journey(1, 2, 30)] : run));
    expect((await assemble(moved)).deflated).toBe(1);
    // Then the first of run 2: itself and the next in its run.
    const again = moved.map((run, r) => (r === 2 ? [journey(2, 0, 30), ...run.slice(1)] : run));
    const { gzip, deflated, size } = await assemble(again);
    expect(deflated).toBe(2);
    const body = again.flat().map((p) => p.text).join('');
    expect(gunzipSync(gzip).toString('utf8')).toBe(body);
    expect(size).toBe(Buffer.byteLength(body));
  });

  it('compresses 3 KB pieces of a kind to within 30 % of the whole document in one stream, a third less than pieces compressed apart (each primed with the piece before it)', async () => {
    const { constants, deflateRawSync, gzipSync } = await import('node:zlib');
    const pieces = Array.from({ length: 200 }, (_, i) => piece(`<Journey><Ref>T${i}</Ref>${Array.from({ length: 40 }, (_, k) => `<Call><Stop>S${(i * 7 + k) % 500}</Stop><Expected>2026-03-10T08:${String((i + k) % 60).padStart(2, '0')}:00+01:00</Expected></Call>`).join('')}</Journey>`));
    const { gzip } = await assemble([pieces]);
    expect(gzip.length).toBeLessThan(gzipSync(pieces.map((p) => p.text).join('')).length * 1.3);
    const apart = pieces.reduce((n, p) => n + deflateRawSync(p.text, { finishFlush: constants.Z_SYNC_FLUSH }).length, 0);
    expect(gzip.length).toBeLessThan(apart * 0.75);
  });
});

describe('a SIRI EstimatedTimetable built from the previous build\'s pieces', () => {
  const now = new Date('2026-03-10T07:35:00Z');
  const call = (i: number, k: number, lateS = 0) => ({
    stop_id: `S${k}`, stop_sequence: k, name: `Stop ${k}`, lat: null, lon: null, status: 'scheduled', temporary: false, update_id: null,
    arrival_at: new Date(now.getTime() + (i + k * 60) * 1000), departure_at: new Date(now.getTime() + (i + k * 60 + 20) * 1000),
    expected_arrival_at: new Date(now.getTime() + (i + k * 61 + lateS) * 1000), expected_departure_at: new Date(now.getTime() + (i + k * 61 + 20 + lateS) * 1000),
    uncertainty_seconds: null, passed: false,
  });
  /** A trip whose signature is its expected times (as network.ts makes it: what its outputs tell beyond its schedule). */
  const trip = (i: number, lateS = 0) => {
    const calls = [1, 2, 3].map((k) => call(i, k, lateS));
    return {
      key: `T${i}`, service_date: '2026-03-10', gtfs_id: 'g', signature: <string | null>`g|${calls.map((c) => c.expected_arrival_at.getTime()).join('|')}`,
      trip: { trip_id: `T${i}`, route_id: `R${i % 7}`, direction_id: i % 2, headsign: `To ${i}`, frequency: false, start_time: '07:00:00' },
      stops: [], overlay: { cancelled: false, applied: [], skipped: new Map(), moved: new Map(), added: [], detour: null, messages: [] },
      delay: null, prediction: <{ from_trip_id: string | null } | null>null, observed_at: null, shape: null, calls,
    };
  };
  const network = (at: Date, trips: ReturnType<typeof trip>[]) => ({ groupId: 'g', timezone: 'Europe/Zurich', now: at, trips, updates: [], vehicles: [] }) as unknown as NetworkNow;

  it('is byte for byte the one built from nothing: unchanged journeys reused, a changed, a new and a gone one written as they are now', async () => {
    const first = await estimatedTimetableOutput(network(now, Array.from({ length: 300 }, (_, i) => trip(i))), 'g');
    // Five seconds later: trip 7 runs a minute late, trip 8 is gone, trip 300 is new.
    const later = network(new Date(now.getTime() + 5000), [...Array.from({ length: 300 }, (_, i) => trip(i, i === 7 ? 60 : 0)).filter((t) => t.key !== 'T8'), trip(300)]);
    const incremental = (await estimatedTimetableOutput(later, 'g', { previous: first!.pieces }))!;
    const scratch = (await estimatedTimetableOutput(later, 'g'))!;
    expect(incremental.pieces.reused).toBe(298);
    expect(incremental.pieces.made).toBe(2);
    const doc = gunzipSync(incremental.gzip).toString('utf8');
    expect(doc).toBe(gunzipSync(scratch.gzip).toString('utf8'));
    expect(incremental.size).toBe(Buffer.byteLength(doc));
    expect(incremental.fingerprint.equals(scratch.fingerprint)).toBe(true);
    expect(doc).not.toContain('<DatedVehicleJourneyRef>T8<');
    expect(doc).toContain('<DatedVehicleJourneyRef>T300<');
    expect(doc).toContain(`<ExpectedArrivalTime>${'2026-03-10T08:37:08+01:00'}</ExpectedArrivalTime>`);
  });

  it("tells a vehicle's journeys together, the others after them, and compresses again only the journeys of the vehicle that reported", async () => {
    // Trips by departure: vehicles A, B and C each run a trip and have the next ones predicted through their block; trips 3 and 7 are of the horizon.
    const vehicleOf = ['A', 'B', 'C', null, 'A', 'B', 'C', null, 'A', 'B'];
    const withVehicle = (i: number, lateS = 0) => {
      const v = vehicleOf[i]!;
      return { ...trip(i, lateS), prediction: { from_trip_id: v === null ? null : `T${vehicleOf.indexOf(v)}` } };
    };
    const trips = vehicleOf.map((_, i) => withVehicle(i));
    const refs = (gzip: Buffer) => [...gunzipSync(gzip).toString('utf8').matchAll(/<DatedVehicleJourneyRef>([^<]*)</g)].map((m) => m[1]);
    const first = (await estimatedTimetableOutput(network(now, trips), 'g'))!;
    expect(refs(first.gzip)).toEqual(['T0', 'T4', 'T8', 'T1', 'T5', 'T9', 'T2', 'T6', 'T3', 'T7']);
    // B reported: its trip in progress runs later; its next trips are told as before.
    const later = network(new Date(now.getTime() + 5000), vehicleOf.map((_, i) => withVehicle(i, i === 1 ? 60 : 0)));
    const incremental = (await estimatedTimetableOutput(later, 'g', { previous: first.pieces }))!;
    expect([incremental.pieces.made, incremental.pieces.reused]).toEqual([1, 9]);
    // T1, and T5 after it in B's run; not C's first journey after B's run. (Plus the document's head and tail, new at each build: its timestamps.)
    expect(incremental.pieces.deflated).toBe(2 + 2);
    const scratch = (await estimatedTimetableOutput(later, 'g'))!;
    expect(gunzipSync(incremental.gzip).equals(gunzipSync(scratch.gzip))).toBe(true);
    expect(scratch.pieces.deflated).toBe(10 + 2);
  });

  it('writes again a journey with no signature (an update applies to it) at every build', async () => {
    const trips = [trip(0), { ...trip(1), signature: null }];
    const first = await estimatedTimetableOutput(network(now, trips), 'g');
    const second = (await estimatedTimetableOutput(network(now, trips), 'g', { previous: first!.pieces }))!;
    expect([second.pieces.reused, second.pieces.made]).toEqual([1, 1]);
  });
});

describe("trip-updates built from the previous build's pieces", () => {
  const now = new Date('2026-03-10T07:35:00Z');
  /** A trip late by `lateS` at its stop 2 (published with its delay): its signature says so. */
  const trip = (i: number, lateS: number) => ({
    key: `20260310:T${i}`, service_date: '2026-03-10', gtfs_id: 'g', signature: `g|${lateS}`,
    trip: { trip_id: `T${i}`, route_id: `R${i % 7}`, direction_id: i % 2, headsign: `To ${i}`, frequency: null, start_time: '07:00:00' },
    stops: [], overlay: { cancelled: false, applied: [], skipped: new Map(), moved: new Map(), added: [], detour: null, messages: [] },
    delay: { stop_sequence: 2, stop_id: 'S2', delay: lateS, at: now }, prediction: null, observed_at: now, shape: null,
    calls: [1, 2, 3].map((k) => ({
      stop_id: `S${k}`, stop_sequence: k, name: null, lat: null, lon: null, status: 'scheduled', temporary: false, update_id: null,
      arrival_at: new Date(now.getTime() + k * 60_000), departure_at: new Date(now.getTime() + k * 60_000), expected_arrival_at: null, expected_departure_at: null,
      uncertainty_seconds: null, passed: false,
    })),
  });
  const network = (trips: ReturnType<typeof trip>[]) => ({ groupId: 'g', timezone: 'Europe/Zurich', now, trips, updates: [], vehicles: [] }) as unknown as NetworkNow;

  it("is at every build the message FeedMessage.encode writes, its pieces moved into one buffer of that build (none left in the previous build's buffer), the builds written alternately into two buffers", async () => {
    // Four builds: 400 trips, then a trip later, one gone and one new at each; each reuses pieces the one before moved.
    const snapshots = [
      network(Array.from({ length: 400 }, (_, i) => trip(i, 30))),
      network([...Array.from({ length: 400 }, (_, i) => trip(i, i === 7 ? 90 : 30)).filter((t) => t.key !== '20260310:T8'), trip(400, 0)]),
      network([...Array.from({ length: 400 }, (_, i) => trip(i, i === 7 ? 90 : i === 9 ? 120 : 30)).filter((t) => t.key !== '20260310:T8' && t.key !== '20260310:T11'), trip(400, 0), trip(401, 5)]),
      network([...Array.from({ length: 400 }, (_, i) => trip(i, i === 7 ? 90 : i === 9 ? 120 : i === 13 ? 60 : 30)).filter((t) => t.key !== '20260310:T8' && t.key !== '20260310:T11'), trip(400, 0), trip(401, 5)]),
    ];
    let previous: Awaited<ReturnType<typeof tripUpdatesOutput>>['pieces'] | undefined;
    const buffers: ArrayBufferLike[][] = [];
    for (const net of snapshots) {
      const out = await tripUpdatesOutput(net, previous);
      const expected = GtfsRealtimeBindings.transit_realtime.FeedMessage.encode(tripUpdatesMessage(net, net.trips)).finish();
      expect(Buffer.compare(out.body, expected)).toBe(0);
      // Read through a build after it (which takes the pieces of the same signature).
      const reader = new TripPieces(out.pieces);
      const kept = net.trips.map((ft) => reader.of(ft, () => null)!);
      expect(reader.made).toBe(0);
      buffers.push([...new Set(kept.map((p) => p.buffer))]);
      previous = out.pieces;
    }
    // The fourth build: T13 later made, the others reused (among them pieces the third build moved).
    expect([previous!.reused, previous!.made]).toEqual([snapshots[3]!.trips.length - 1, 1]);
    expect(buffers.map((b) => b.length)).toEqual([1, 1, 1, 1]);
    // Each build writes into the buffer of the build before last (its pieces all moved since), never
    // into the one whose pieces it copies.
    const [b1, b2, b3, b4] = buffers.map((b) => b[0]);
    expect([b1 !== b2, b3 === b1, b4 === b2]).toEqual([true, true, true]);
  });

  it("never writes into a buffer whose pieces a build under way still copies (two builds from the same pieces overlapping)", async () => {
    const build = (n: number, lateOf: (i: number) => number) => network(Array.from({ length: n }, (_, i) => trip(i, lateOf(i))));
    // (Built twice before: the buffers in turn are then sized after a build, as they are in service.)
    const zero = await tripUpdatesOutput(build(400, () => 30), undefined, 0);
    const first = await tripUpdatesOutput(build(400, () => 30), zero.pieces, 0);
    const second = await tripUpdatesOutput(build(400, (i) => (i === 3 ? 60 : 30)), first.pieces, 0);
    // Two builds from the second's pieces, yielding after each trip (slices of 0 ms): the longer
    // one makes 800 new trips first, and copies the second's pieces after, while a build from the
    // shorter one's runs.
    const all = build(1200, (i) => (i === 3 ? 60 : i % 100 === 5 ? 45 : 30));
    const longNet = { ...all, trips: [...all.trips.slice(400), ...all.trips.slice(0, 400)] } as NetworkNow;
    const long = tripUpdatesOutput(longNet, second.pieces, 0);
    const shortNet = build(400, (i) => (i === 3 ? 60 : i === 4 ? 90 : 30));
    const short = await tripUpdatesOutput(shortNet, second.pieces, 0);
    const afterNet = build(400, (i) => (i === 3 ? 60 : i === 4 ? 90 : i === 5 ? 15 : 30));
    const after = tripUpdatesOutput(afterNet, short.pieces, 0);
    const [longOut, afterOut] = await Promise.all([long, after]);
    const encoded = (net: NetworkNow) => GtfsRealtimeBindings.transit_realtime.FeedMessage.encode(tripUpdatesMessage(net, net.trips)).finish();
    expect(Buffer.compare(short.body, encoded(shortNet))).toBe(0);
    expect(Buffer.compare(longOut.body, encoded(longNet))).toBe(0);
    expect(Buffer.compare(afterOut.body, encoded(afterNet))).toBe(0);
    // Once no build reads the second's pieces, the next build writes into their buffer again.
    const lastNet = build(400, (i) => (i === 3 ? 60 : i === 4 ? 90 : i === 5 ? 15 : i === 6 ? 20 : 30));
    const last = await tripUpdatesOutput(lastNet, afterOut.pieces, 0);
    expect(Buffer.compare(last.body, encoded(lastNet))).toBe(0);
    const bufferOf = (pieces: typeof last.pieces, net: NetworkNow) => new TripPieces(pieces).of(net.trips[0]!, () => null)!.buffer;
    expect(bufferOf(last.pieces, lastNet)).toBe(bufferOf(short.pieces, shortNet));
  });
});

describe('the feeds the cache serves, rebuilt from their previous pieces', () => {
  it('are the EstimatedTimetable and trip-updates built from nothing at the same time after a report moved a trip in progress and the next trip of its block', async () => {
    const { feedFixture, settled } = await import('./fixture.js');
    const { item, newDevice, newDriver, newVehicle, send } = await import('../helpers/actual.js');
    const { networkNow } = await import('../../src/domains/feeds/network.js');
    const f = await feedFixture();
    try {
      const { t, g } = f;
      const device = await newDevice(t, g);
      const bus = await newVehicle(t, g);
      const et = async () => (await t.app.inject({ url: `/api/v4/groups/${g}/siri/estimated-timetable` })).body;
      const tu = (headers: Record<string, string> = {}) => t.app.inject({ url: `/api/v4/groups/${g}/gtfs-rt/trip-updates`, headers });
      // A bus on T3 (block B2, then T4) left S1 on time; T2 is in the horizon, its vehicle not known.
      await send(t, g, device.auth, [
        item('sign_on', '2026-03-10T07:00:00Z', { driver_id: await newDriver(t, g), vehicle_id: bus }),
        item('trip_event', '2026-03-10T07:30:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
      ]);
      const before = await et();
      await tu();
      // Six minutes later T3 passes S2 four minutes late: T3 and T4 are told anew, T2 as it was.
      f.clock.advance(360_000);
      const r = await send(t, g, device.auth, [item('trip_event', '2026-03-10T07:45:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S2', stop_sequence: 2, gps_valid: true })]);
      expect(r.json.rejected).toEqual([]);
      await et();
      await settled(f);
      const served = await et();
      const net = await networkNow(t.ctx.db, g, f.clock.now(), {
        staleVehicleSeconds: t.ctx.config.feeds.staleVehicleSeconds, predictions: t.ctx.config.predictions, scheduleHorizonSeconds: t.ctx.config.feeds.etHorizonMinutes * 60,
      });
      const scratch = gunzipSync((await estimatedTimetableOutput(net, g))!.gzip).toString('utf8');
      expect(served).toBe(scratch);
      // trip-updates the same: as FeedMessage.encode writes the message of the same snapshot.
      const { tripUpdatesMessage } = await import('../../src/domains/feeds/gtfs-rt/feeds.js');
      const { rt } = await import('./fixture.js');
      const truth = Buffer.from(rt.FeedMessage.encode(tripUpdatesMessage(net, net.trips)).finish());
      expect((await tu()).rawPayload.equals(truth)).toBe(true);
      // (Gzipped by the cache from 1 KiB: this one is smaller.)
      const zipped = await tu({ 'accept-encoding': 'gzip' });
      expect((zipped.headers['content-encoding'] === 'gzip' ? gunzipSync(zipped.rawPayload) : zipped.rawPayload).equals(truth)).toBe(true);
      expect(rt.FeedMessage.decode(truth).entity.map((e) => e.id)).toEqual(['trip:20260310:T3', 'trip:20260310:T4']);
      expect(served).not.toBe(before);
      expect(served).toContain('<StopPointRef>S2</StopPointRef><Order>2</Order><StopPointName>Second</StopPointName><AimedArrivalTime>2026-03-10T08:40:00+01:00</AimedArrivalTime><ExpectedArrivalTime>2026-03-10T08:45:00+01:00</ExpectedArrivalTime>');
    } finally {
      await f.t.close();
    }
  });
});
