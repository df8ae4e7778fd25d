/** The drivers' ratings of the driver application, per app version, and their three shapes. */
import { Type, type Static } from 'typebox';
import { Nullable } from '../../platform/http/params.js';

export const DriverVersion = Type.String({ minLength: 1, maxLength: 64, description: 'The version of the driver application, as it reports it (e.g. 4.12.0).' });

export const RatingRecord = Type.Object(
  {
    driver_id: Type.String(),
    driver_version: Type.String(),
    score: Type.Integer({ minimum: 1, maximum: 5 }),
    comment: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time', description: 'When the driver last changed the rating.' }),
  },
  { additionalProperties: false, title: 'Rating', description: 'A driver\'s rating of one version of the driver application (one per driver and version; a new one replaces it).' },
);
export type RatingRecord = Static<typeof RatingRecord>;

export const RatingByDriverVersion = Type.Object(
  {
    driver_version: Type.String(),
    average: Type.Number({ description: 'Mean score, rounded to 2 decimals.' }),
    count: Type.Integer(),
  },
  { additionalProperties: false, title: 'RatingByDriverVersion' },
);
export type RatingByDriverVersion = Static<typeof RatingByDriverVersion>;

export const RatingByGroup = Type.Object(
  {
    group_id: Type.String(),
    average: Nullable(Type.Number({ description: 'Mean score, rounded to 2 decimals; null without ratings.' })),
    count: Type.Integer(),
  },
  { additionalProperties: false, title: 'RatingByGroup' },
);
export type RatingByGroup = Static<typeof RatingByGroup>;

export const GROUP_BY = ['driver_version', 'group'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export const RatingsAnswer = Type.Union([Type.Array(RatingRecord), Type.Array(RatingByDriverVersion), Type.Array(RatingByGroup)], {
  description: 'group_by absent: every rating (Rating); driver_version: one RatingByDriverVersion per app version; group: one RatingByGroup.',
});

export const RatingBody = Type.Object(
  {
    driver_version: DriverVersion,
    score: Type.Integer({ minimum: 1, maximum: 5, description: '1 (poor) to 5 (excellent).' }),
    comment: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  },
  { additionalProperties: false },
);
export type RatingBody = Static<typeof RatingBody>;
