/** The PREDICTIONS_* variables (docs/predictions.md): defaults, and a bad value named. */
import { describe, expect, it } from 'vitest';
import { loadConfig, testConfig } from '../../src/config.js';

describe('predictions configuration', () => {
  it('has the documented defaults, and the job is off in tests', () => {
    expect(loadConfig({}).predictions).toEqual({ job: true, historyDays: 56, maxAgeHours: 24, bandMinutes: 60, minSamples: 5, minLayoverSeconds: 180, clockStepSeconds: 15 });
    expect(testConfig().predictions.job).toBe(false);
    expect(loadConfig({ PREDICTIONS_JOB: 'false', PREDICTIONS_MIN_LAYOVER_SECONDS: '0' }).predictions).toMatchObject({ job: false, minLayoverSeconds: 0 });
  });

  it('names the variable of a bad value', () => {
    expect(() => loadConfig({ PREDICTIONS_BAND_MINUTES: '2' })).toThrow(/PREDICTIONS_BAND_MINUTES/);
    expect(() => loadConfig({ PREDICTIONS_HISTORY_DAYS: 'many' })).toThrow(/PREDICTIONS_HISTORY_DAYS/);
  });
});
