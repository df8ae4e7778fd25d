/**
 * GET stats/predictions (issue #17, section 3): the Cal-ITP Trip Updates metrics of the
 * predictions published, from the sample the sampler records (samples.ts), by day and by route.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { OFFICE, groupRoles } from '../../platform/http/access.js';
import { GroupParams, Nullable } from '../../platform/http/params.js';
import { PeriodQuery } from '../../platform/http/periods.js';
import { PUBLIC, op } from '../../platform/http/route.js';
import { component, ref } from '../../platform/http/components.js';
import { period } from '../../platform/time.js';
import { requireGroup } from '../groups/service.js';
import { COMPLETE_BIN_SAMPLES, HORIZON_BANDS, WINDOW_MINUTES, predictionStats } from './samples.js';

/** The longest period of stats/predictions, in days (as stats/trip-tracking). */
export const MAX_PREDICTION_STATS_DAYS = 31;

const CAL_ITP = 'https://github.com/cal-itp/data-infra/blob/main/warehouse/models/mart/gtfs/fct_stop_time_updates_metrics.sql';

export const PREDICTION_DEFINITIONS = [
  `**What is scored**: the sample of what the predictions published (predicted arrival at each stop ahead of a trip in progress or of the next trips of its block, at most one sample a minute per trip and stop, stops predicted more than PREDICTION_SAMPLES_MAX_HORIZON_MINUTES ahead left out), ` +
    `against the actual arrival of the tracking (\`actual_arrival_at\`, else the passing time \`actual_at\`), joined when this answers. ` +
    `Only samples taken in the ${WINDOW_MINUTES} minutes before the actual arrival count (as Cal-ITP: predictions made after the bus arrived, or more than ${WINDOW_MINUTES} minutes before, are left out); a stop never passed is not scored. ` +
    `**T** = minutes from the sample to the actual arrival (fractional). Definitions after the Cal-ITP GTFS-RT Trip Updates metrics (${CAL_ITP}; https://analysis.dds.dot.ca.gov/rt_trip_updates_operator_metrics/README.html).`,
  '**Error** (seconds) = predicted arrival − actual arrival: positive when the prediction was later than the bus (a rider following it misses the bus), negative when earlier (the rider waits). Cal-ITP writes it with the other sign (actual − predicted).',
  '**Accurate**: −60·ln(T+1.5) ≤ error ≤ 60·ln(T+1.3) seconds, i.e. Cal-ITP\'s −60·ln(T+1.3) ≤ actual − predicted ≤ 60·ln(T+1.5) in this sign: the tighter bound on the side where the rider misses the bus ' +
    '(T = 5 min: from −112 s to +110 s; T = 0: from −24 s to +16 s). `accuracy_percent` = accurate / predictions × 100.',
  '**Early / on time / late predictions**: late when error > 60·ln(T+1.3) (the bus came earlier than predicted by more than the bound: the rider misses it), early when error < −60·ln(T+1.5) (the bus came later: the rider waits), on time in between (= accurate). ' +
    'Bus catch likelihood = early_percent + on_time_percent.',
  '**Median error and IQR**: the median (`median_error_seconds`) and the 25th and 75th percentiles (linear interpolation) of the error; `iqr_error_seconds` = p75 − p25.',
  `**Completeness**: for each trip and stop scored, the one-minute bins counted back from the actual arrival (bin k holds the samples with k ≤ T < k+1), from the bin of its first sample in the window (at most the ${WINDOW_MINUTES} bins) to the arrival; ` +
    `a bin is complete with at least ${COMPLETE_BIN_SAMPLES} sample. \`completeness_percent\` = complete_minute_bins / minute_bins × 100. ` +
    'Cal-ITP counts a bin complete with two or more predictions because it reads the feeds every 20 seconds (a feed refreshed every 30 s); this service samples what it publishes once a minute, so a bin holds one sample at most and the figure measures the minutes the stop had a prediction, from its first one to the arrival.',
  '**Wobble** (seconds): how much successive predictions for the same trip and stop move: |predicted arrival − the previous sample\'s predicted arrival| for each pair of successive samples (normally a minute apart) in the window; `median_wobble_seconds` is their median, `wobble_pairs` their number. ' +
    'Cal-ITP takes the spread (max − min) of the predicted arrivals within each minute, averaged; with one sample a minute, the spread of two successive predictions is the same measure over the minute between them.',
  `**Horizon bands** (\`by_horizon\`): the same figures for T in [0, 5), [5, 10), [10, 20), [20, 30) minutes (a wobble pair and a completeness bin count in the band of their later sample and of their bin). Shares are percentages with one decimal, null when nothing was scored.`,
  '**Scope**: a caller limited to teams gets the trips whose vehicles or drivers (as recorded by the tracking) belong to their teams.',
].join('\n\n');

const figureProps = {
  predictions: Type.Integer({ description: 'Samples scored (predictions with an actual arrival, taken in the 30 minutes before it).' }),
  accurate: Type.Integer({ description: 'Samples whose error lies within the accuracy bounds.' }),
  accuracy_percent: Nullable(Type.Number({ description: 'accurate / predictions × 100 (%).' })),
  early_percent: Nullable(Type.Number({ description: 'Share of early predictions, error < −60·ln(T+1.5) s (%): the rider waits.' })),
  on_time_percent: Nullable(Type.Number({ description: 'Share of predictions within the accuracy bounds (%).' })),
  late_percent: Nullable(Type.Number({ description: 'Share of late predictions, error > 60·ln(T+1.3) s (%): the rider misses the bus.' })),
  median_error_seconds: Nullable(Type.Number({ description: 'Median of the error, predicted − actual arrival (s).' })),
  p25_error_seconds: Nullable(Type.Number({ description: '25th percentile of the error (s).' })),
  p75_error_seconds: Nullable(Type.Number({ description: '75th percentile of the error (s).' })),
  iqr_error_seconds: Nullable(Type.Number({ description: 'Interquartile range of the error, p75 − p25 (s).' })),
  minute_bins: Type.Integer({ description: 'One-minute bins before the actual arrivals, from each stop\'s first sample in the window.' }),
  complete_minute_bins: Type.Integer({ description: `Bins holding at least ${COMPLETE_BIN_SAMPLES} sample.` }),
  completeness_percent: Nullable(Type.Number({ description: 'complete_minute_bins / minute_bins × 100 (%).' })),
  wobble_pairs: Type.Integer({ description: 'Pairs of successive samples of the same trip and stop.' }),
  median_wobble_seconds: Nullable(Type.Number({ description: 'Median of |difference of the predicted arrivals| over the pairs (s).' })),
};
const Band = component('PredictionFiguresOfHorizon', Type.Object(
  {
    from_minutes: Type.Integer({ minimum: 0, description: 'Lower bound of T, minutes (inclusive).' }),
    to_minutes: Type.Integer({ minimum: 0, description: 'Upper bound of T, minutes (exclusive).' }),
    ...figureProps,
  },
  { additionalProperties: false, description: 'The prediction figures of the samples whose horizon T lies in a band.' },
));
const Figures = { ...figureProps, by_horizon: Type.Array(ref(Band), { description: `By horizon band: ${HORIZON_BANDS.map(([a, b]) => `${a}–${b}`).join(', ')} minutes.` }) };
const Total = component('PredictionFigures', Type.Object(Figures, { additionalProperties: false, description: 'Accuracy, completeness and wobble of the predictions over a set of samples, and by horizon band.' }));
const OfDay = component('PredictionFiguresOfDay', Type.Object({ service_date: Type.String({ format: 'date', description: 'YYYY-MM-DD.' }), ...Figures }, { additionalProperties: false, description: 'The prediction figures of one service date.' }));
const OfRoute = component('PredictionFiguresOfRoute', Type.Object({ route_id: Type.String({ description: 'GTFS route_id.' }), ...Figures }, { additionalProperties: false, description: 'The prediction figures of one route.' }));
export const PredictionStats = component('PredictionStats', Type.Object(
  {
    start_date: Type.String({ format: 'date', description: 'First service date, YYYY-MM-DD.' }),
    end_date: Type.String({ format: 'date', description: 'Last service date, YYYY-MM-DD.' }),
    total: ref(Total),
    by_day: Type.Array(ref(OfDay), { description: 'Per service date with samples scored, in order.' }),
    by_route: Type.Array(ref(OfRoute), { description: 'Per route with samples scored, by route_id.' }),
  },
  { additionalProperties: false, title: 'PredictionStats', description: 'The Cal-ITP Trip Updates metrics of the predictions published (see the operation); total is over the whole period.' },
));

export async function predictionRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;
  app.get('/groups/:group_id/stats/predictions', {
    schema: op(
      {
        operationId: 'getPredictionStats', summary: 'Accuracy, completeness and wobble of the published predictions', tags: ['stats', 'trips'],
        access: groupRoles(OFFICE, 'GetPredictionStatsRoleRequired', 'read'), documents: PUBLIC,
        description: [
          `Totals, by day (\`by_day\`) and by route (\`by_route\`), each with the same figures by horizon band (\`by_horizon\`). Period: at most ${MAX_PREDICTION_STATS_DAYS} days (service dates, the group's time zone).`,
          PREDICTION_DEFINITIONS,
        ].join('\n\n'),
      },
      { params: GroupParams, querystring: Type.Object({ ...PeriodQuery }), response: { 200: ref(PredictionStats) } },
    ),
  }, async (req) => {
    const scope = req.groupScope!;
    const g = await requireGroup(ctx.db, scope.groupId);
    const p = period(req.query.start_date, req.query.end_date, g.timezone, MAX_PREDICTION_STATS_DAYS);
    return predictionStats(ctx.db, scope, p);
  });
}
