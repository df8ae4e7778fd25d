import { gunzipSync } from 'node:zlib';
import { DateTime } from 'luxon';
import { fragment } from 'xmlbuilder2';
import { describe, expect, it } from 'vitest';
import { siriTime } from '../../src/domains/feeds/siri/build.js';

describe('SIRI times', () => {
  it('write each instant as the local time and offset luxon gives (to the second), across the DST changes of four zones', () => {
    const zones = ['Europe/Zurich', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe'];
    // Every 7 minutes 13.25 seconds over the two days around each 2026 change, and a year at large steps.
    const instants: number[] = [];
    for (const day of ['2026-03-08', '2026-03-29', '2026-04-05', '2026-10-04', '2026-10-25', '2026-11-01']) {
      const from = Date.parse(`${day}T00:00:00Z`) - 86_400_000;
      for (let ms = from; ms < from + 2 * 86_400_000; ms += 433_250) instants.push(ms);
    }
    for (let ms = Date.parse('2026-01-01T00:00:00Z'); ms < Date.parse('2027-01-01T00:00:00Z'); ms += 3_600_000 * 7 + 1234) instants.push(ms);
    for (const zone of zones) {
      for (const ms of instants) {
        const truth = DateTime.fromMillis(Math.floor(ms / 1000) * 1000, { zone }).toISO({ suppressMilliseconds: true });
        expect(siriTime(new Date(ms), zone), `${new Date(ms).toISOString()} in ${zone}`).toBe(truth);
      }
    }
  });
});

describe('a network-size EstimatedTimetable', () => {
  it('written a chunk of journeys at a time: every journey once, in order, escaped, valid against the SIRI 2.1 schemas', async () => {
    const { estimatedTimetable } = await import('../../src/domains/feeds/siri/build.js');
    const { siriErrors } = await import('./siri-xsd.js');
    const now = new Date('2026-03-10T07:35:00Z');
    const call = (i: number, k: number) => ({
      stop_id: `S${k}`, stop_sequence: k, name: `Stop ${k}`, lat: null, lon: null, status: 'scheduled', temporary: false, update_id: null,
      arrival_at: new Date(now.getTime() + (i + k * 60) * 1000), departure_at: new Date(now.getTime() + (i + k * 60 + 20) * 1000),
      expected_arrival_at: new Date(now.getTime() + (i + k * 61) * 1000), expected_departure_at: new Date(now.getTime() + (i + k * 61 + 20) * 1000),
      uncertainty_seconds: null, passed: false,
    });
    const trips = Array.from({ length: 450 }, (_, i) => ({
      key: `T${i}`, service_date: '2026-03-10', gtfs_id: 'g',
      trip: { trip_id: `T${i}`, route_id: `R${i % 7}`, direction_id: i % 2, headsign: i === 300 ? 'Gare & Lac <Nord>' : `To ${i}`, frequency: false, start_time: '07:00:00' },
      stops: [], overlay: { cancelled: false, applied: [], skipped: new Map(), moved: new Map(), added: [], detour: null, messages: [] },
      delay: null, prediction: null, observed_at: null, shape: null, signature: null, calls: [1, 2, 3].map((k) => call(i, k)),
    }));
    const net = { groupId: 'g', timezone: 'Europe/Zurich', now, trips, updates: [], vehicles: [] } as unknown as Parameters<typeof estimatedTimetable>[0];
    const doc = (await estimatedTimetable(net, 'g'))!;
    expect(await siriErrors(doc)).toEqual([]);
    const refs = [...doc.matchAll(/<DatedVehicleJourneyRef>([^<]*)<\/DatedVehicleJourneyRef>/g)].map((m) => m[1]);
    expect(refs).toEqual(trips.map((t) => t.trip.trip_id));
    expect(doc.match(/<EstimatedCall>/g)).toHaveLength(450 * 3);
    expect(doc).toContain('<DestinationName>Gare &amp; Lac &lt;Nord&gt;</DestinationName>');
    expect(doc).not.toContain('<!--');
    // What identifies its content (the ETag) stays with the production times moved, and changes with a journey's times.
    const { estimatedTimetableOutput } = await import('../../src/domains/feeds/siri/build.js');
    const out = (await estimatedTimetableOutput(net, 'g'))!;
    expect(gunzipSync(out.gzip).toString('utf8')).toBe(doc);
    const later = (await estimatedTimetableOutput({ ...net, now: new Date(now.getTime() + 5000) }, 'g'))!;
    expect(gunzipSync(later.gzip).toString('utf8')).not.toBe(doc);
    expect(later.fingerprint.toString('hex')).toBe(out.fingerprint.toString('hex'));
    const late = (c: ReturnType<typeof call>) => ({ ...c, expected_arrival_at: new Date(c.expected_arrival_at.getTime() + 60_000) });
    const moved = { ...net, trips: trips.map((t, i) => (i === 7 ? { ...t, calls: t.calls.map(late) } : t)) } as unknown as typeof net;
    expect((await estimatedTimetableOutput(moved, 'g'))!.fingerprint.toString('hex')).not.toBe(out.fingerprint.toString('hex'));
  });

  it('its journeys written as text are what xmlbuilder2 writes from the same objects, hostile texts included', async () => {
    const { xmlText } = await import('../../src/domains/feeds/siri/build.js');
    const texts = ['', 'plain', 'Gare & Lac <Nord>', 'a &amp; b', '&foo; &#65; &#x42; &#;', '"quoted" \'single\'', 'tab\tline\nbreak', '\u0001 control', 'émoji 🚌', '&&amp;&lt;'];
    const objects = [
      ...texts.map((t) => ({ A: t })),
      { A: { B: [], C: undefined, D: 0, E: false, F: true, G: 40.712776 } },
      { A: { B: [{ C: 'x' }, { C: '' }, 'y'], D: {} } },
      { A: [{ B: texts.join('|') }, 'z'] },
    ];
    for (const o of objects) {
      const [name, value] = Object.entries(o)[0]!;
      const truth = fragment().ele(JSON.parse(JSON.stringify(o)) as object).end({ prettyPrint: false });
      expect(xmlText(name, value as never), JSON.stringify(o)).toBe(truth);
    }
    // An attribute, a comment or an instruction is not an element: refused, not written as one.
    for (const key of ['@id', '#', '!', '?', '$']) expect(() => xmlText('A', { B: { [key]: 'x' } } as never), key).toThrow(/elements only/);
  });
});
