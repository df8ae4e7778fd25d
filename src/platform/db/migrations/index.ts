import type { Migration } from '../migrate.js';
import { m0001 } from './0001_identity.js';
import { m0002 } from './0002_gtfs.js';
import { m0003 } from './0003_fleet.js';
import { m0004 } from './0004_actual.js';
import { m0005 } from './0005_trip_updates.js';
import { m0006 } from './0006_tracking.js';
import { m0007 } from './0007_planning.js';
import { m0008 } from './0008_change_feed.js';
import { m0009 } from './0009_announced_tables.js';
import { m0010 } from './0010_credential_bounds.js';
import { m0011 } from './0011_login_failures_at.js';
import { m0015 } from './0015_stop_arrival_departure.js';
import { m0017 } from './0017_report_partitions.js';
import { m0018 } from './0018_prediction_segments.js';
import { m0019 } from './0019_prediction_samples.js';
import { m0020 } from './0020_dirty_since.js';
import { m0021 } from './0021_prediction_sample_sets.js';
import { m0022 } from './0022_tracking_written.js';
import { m0023 } from './0023_prediction_model_version.js';
import { m0024 } from './0024_report_keys_by_time.js';
import { m0025 } from './0025_tracking_fillfactor.js';

/** Every migration, in order. A new one is appended here; applied ones never change. */
export const migrations: readonly Migration[] = [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010, m0011, m0015, m0017, m0018, m0019, m0020, m0021, m0022, m0023, m0024, m0025];
