import type { Migration } from '../migrate.js';

/**
 * Which build of a group's prediction model is stored (issue #16): `prediction_models.version` is
 * drawn from `prediction_model_version` at every build, in the build's transaction (which also
 * replaces the group's segments). A reader that keeps a model's segments between reads (the feeds'
 * rebuilds, every few seconds: predictions/model.ts ModelMemo) asks for the version alone and
 * reads segments again only when it changed, or for route directions and time bands it has not
 * read yet. `built_at` is the clock's time of the build, which two builds can share.
 */
export const m0023: Migration = {
  version: 23,
  name: 'prediction model version',
  sql: `
CREATE SEQUENCE prediction_model_version;
ALTER TABLE prediction_models ADD COLUMN version bigint NOT NULL DEFAULT nextval('prediction_model_version');`,
};
