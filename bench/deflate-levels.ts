/**
 * npx tsx bench/deflate-levels.ts: what the compression level of the timetable's pieces costs and
 * gives (src/domains/feeds/fragments.ts PIECE_LEVEL). 2,000 SIRI journeys of 40 calls each, as the
 * EstimatedTimetable writes them (synthetic: ids, names and times varied), each deflated with the
 * one before it as its dictionary and ended by a sync flush, as `assemble` does; CPU time of the
 * process and bytes out, per level.
 */
import { constants, deflateRawSync } from 'node:zlib';

const two = (n: number) => String(n % 60).padStart(2, '0');
const journey = (i: number) => Buffer.from(
  `<EstimatedVehicleJourney><LineRef>B${i % 300}</LineRef><DirectionRef>${i % 2}</DirectionRef><FramedVehicleJourneyRef><DataFrameRef>2026-11-27</DataFrameRef>` +
  `<DatedVehicleJourneyRef>EN_D6-Weekday-SDon-0${(i * 7919) % 99999}00_B${i % 300}_${i}</DatedVehicleJourneyRef></FramedVehicleJourneyRef>` +
  `<DestinationName>SOME PLACE via ${i % 50} AV</DestinationName><Monitored>true</Monitored><EstimatedCalls>` +
  Array.from({ length: 40 }, (_, k) => {
    const aimed = `2026-11-27T08:${two(i + k)}:${two(k * 17)}-05:00`;
    const expected = `2026-11-27T08:${two(i + k + 1)}:${two(k * 31 + i)}-05:00`;
    return `<EstimatedCall><StopPointRef>${300000 + ((i * 13 + k * 7) % 14000)}</StopPointRef><Order>${k + 1}</Order><StopPointName>${k % 5} AV/${(i + k) % 90} ST</StopPointName>` +
      `<AimedArrivalTime>${aimed}</AimedArrivalTime><ExpectedArrivalTime>${expected}</ExpectedArrivalTime><AimedDepartureTime>${aimed}</AimedDepartureTime><ExpectedDepartureTime>${expected}</ExpectedDepartureTime></EstimatedCall>`;
  }).join('') +
  '</EstimatedCalls><IsCompleteStopSequence>true</IsCompleteStopSequence></EstimatedVehicleJourney>',
);

const pieces = Array.from({ length: 2000 }, (_, i) => journey(i));
const total = pieces.reduce((n, p) => n + p.length, 0);
for (const level of [6, 4, 3, 2, 1]) {
  const before = process.cpuUsage();
  let out = 0;
  pieces.forEach((p, i) => {
    const dictionary = i > 0 ? pieces[i - 1]!.subarray(Math.max(0, pieces[i - 1]!.length - 32 * 1024)) : undefined;
    out += deflateRawSync(p, { level, finishFlush: constants.Z_SYNC_FLUSH, ...(dictionary ? { dictionary } : {}) }).length;
  });
  const used = process.cpuUsage(before);
  console.log(`level ${level}: ${(total / 1e6).toFixed(1)} MB → ${(out / 1e6).toFixed(2)} MB, ${((used.user + used.system) / 1000).toFixed(0)} ms of CPU`);
}
