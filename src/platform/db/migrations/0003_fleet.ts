import type { Migration } from '../migrate.js';

/**
 * Resources (drivers, vehicles, depots; devices exist since 0001), the drivers' ratings of the
 * driver application, and the SMS notifications the service sends.
 *
 * Archiving is never deletion (spec: What the service does 7): drivers carry `archived`,
 * vehicles the status `archived`; no row of these tables is ever deleted by the service.
 * staff_number and license_plate identify a driver and a vehicle in planning files, so each is
 * unique in its group. The constraints are DEFERRABLE so that one import may swap two values
 * between records (checked at commit), while ordinary writes check them at once.
 */
export const m0003: Migration = {
  version: 3,
  name: 'fleet',
  sql: `
CREATE TABLE drivers (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  driver_id text NOT NULL CHECK (driver_id ~ '^[0-9a-f]{24}$'),
  driver_name text NOT NULL,
  staff_number text NOT NULL,
  teams text[] NOT NULL DEFAULT '{}',
  comment text,
  archived boolean NOT NULL DEFAULT false,
  code text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, driver_id),
  CONSTRAINT drivers_staff_number_key UNIQUE (group_id, staff_number) DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX drivers_code ON drivers (group_id, code) WHERE code IS NOT NULL;

CREATE TABLE vehicles (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  vehicle_id text NOT NULL,
  fleet_number text NOT NULL,
  license_plate text NOT NULL,
  teams text[] NOT NULL DEFAULT '{}',
  comment text,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'maintenance', 'out_of_service', 'archived')),
  capacity integer CHECK (capacity >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, vehicle_id),
  CONSTRAINT vehicles_license_plate_key UNIQUE (group_id, license_plate) DEFERRABLE INITIALLY IMMEDIATE
);

-- Devices rows may predate vehicles: the references hold for every write from now on.
ALTER TABLE devices ADD CONSTRAINT devices_vehicle_fkey FOREIGN KEY (group_id, vehicle_id) REFERENCES vehicles (group_id, vehicle_id) NOT VALID;
ALTER TABLE devices ADD CONSTRAINT devices_team_fkey FOREIGN KEY (group_id, team_id) REFERENCES teams (group_id, team_id) NOT VALID;

CREATE TABLE depots (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  depot_id text NOT NULL,
  name text NOT NULL,
  team_id text,
  address text,
  latitude double precision CHECK (latitude BETWEEN -90 AND 90),
  longitude double precision CHECK (longitude BETWEEN -180 AND 180),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, depot_id),
  FOREIGN KEY (group_id, team_id) REFERENCES teams (group_id, team_id),
  CHECK ((latitude IS NULL) = (longitude IS NULL))
);

CREATE TABLE ratings (
  group_id text NOT NULL,
  driver_id text NOT NULL,
  driver_version text NOT NULL,
  score smallint NOT NULL CHECK (score BETWEEN 1 AND 5),
  comment text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, driver_id, driver_version),
  FOREIGN KEY (group_id, driver_id) REFERENCES drivers (group_id, driver_id) ON DELETE CASCADE
);

CREATE TABLE sms_notifications (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  notification_id text NOT NULL,
  recipient text NOT NULL,
  message text NOT NULL,
  device_id text,
  gtfs_id text,
  transport text NOT NULL,
  status text NOT NULL CHECK (status IN ('sending', 'sent', 'failed')),
  error text,
  provider_message_id text,
  created_by text,
  created_at timestamptz NOT NULL,
  sent_at timestamptz,
  PRIMARY KEY (group_id, notification_id),
  FOREIGN KEY (group_id, device_id) REFERENCES devices (group_id, device_id)
);
CREATE INDEX sms_notifications_created ON sms_notifications (group_id, created_at);
`,
};
