/** The drivers' ratings of the driver application, per app version, and their three shapes. */
import { Type, type Static } from 'typebox';
import { Nullable } from '../../platform/http/params.js';
import { component, ref } from '../../platform/http/components.js';

export const DriverVersion = Type.String({ minLength: 1, maxLength: 64, description: 'The version of the driver application, as it reports it (e.g. 4.12.0).' });

export const RatingRecord = component('Rating', Type.Object(
  {
    driver_id: Type.String({ description: 'The driver who rated.' }),
    driver_version: Type.String({ description: 'The version of the driver application rated.' }),
    score: Type.Integer({ minimum: 1, maximum: 5, description: '1 (poor) to 5 (excellent).' }),
    comment: Nullable(Type.String({ description: 'The driver\'s comment.' })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time', description: 'When the driver last changed the rating.' }),
  },
  { additionalProperties: false, title: 'Rating', description: 'A driver\'s rating of one version of the driver application (one per driver and version; a new one replaces it).' },
));
export type RatingRecord = Static<typeof RatingRecord>;

export const RatingByDriverVersion = component('RatingByDriverVersion', Type.Object(
  {
    driver_version: Type.String({ description: 'The version of the driver application.' }),
    average: Type.Number({ minimum: 1, maximum: 5, description: 'Mean score, rounded to 2 decimals.' }),
    count: Type.Integer({ minimum: 1, description: 'The number of ratings of this version.' }),
  },
  { additionalProperties: false, title: 'RatingByDriverVersion', description: 'Mean score and number of ratings of one version of the driver application.' },
));
export type RatingByDriverVersion = Static<typeof RatingByDriverVersion>;

export const RatingByGroup = component('RatingByGroup', Type.Object(
  {
    group_id: Type.String(),
    average: Nullable(Type.Number({ description: 'Mean score, rounded to 2 decimals; null without ratings.' })),
    count: Type.Integer({ minimum: 0, description: 'The number of ratings.' }),
  },
  { additionalProperties: false, title: 'RatingByGroup', description: 'Mean score and number of ratings over the group (the drivers the caller sees).' },
));
export type RatingByGroup = Static<typeof RatingByGroup>;

export const GROUP_BY = ['driver_version', 'group'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export const RatingsAnswer = Type.Union([Type.Array(ref(RatingRecord)), Type.Array(ref(RatingByDriverVersion)), Type.Array(ref(RatingByGroup))], {
  description: 'group_by absent: every rating (Rating); driver_version: one RatingByDriverVersion per app version; group: one RatingByGroup.',
});

export const RatingBody = component('RatingBody', Type.Object(
  {
    driver_version: DriverVersion,
    score: Type.Integer({ minimum: 1, maximum: 5, description: '1 (poor) to 5 (excellent).' }),
    comment: Type.Optional(Nullable(Type.String({ maxLength: 2000, description: 'A comment on the version.' }))),
  },
  { additionalProperties: false, description: 'A driver\'s rating of a version of the driver application.' },
));
export type RatingBody = Static<typeof RatingBody>;
