/** Period parameters shared by the operations endpoints: service dates, inclusive, both forms. */
import { Type } from 'typebox';
import { DateEither } from './params.js';

export const PeriodQuery = {
  start_date: DateEither('First service date of the period, inclusive (YYYY-MM-DD or YYYYMMDD).'),
  end_date: DateEither('Last service date of the period, inclusive (YYYY-MM-DD or YYYYMMDD).'),
};

export const Paging = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1000, description: 'Page size (default 1000, at most 10000); the next page is in the Link header (rel="next").' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Opaque cursor from the Link header of the previous page.' })),
};
