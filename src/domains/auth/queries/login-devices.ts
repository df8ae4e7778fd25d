/**
 * The device a session logs in on (POST /auth/login with a device_id): a read model of the login,
 * read-only over fleet's devices, the groups and the account's memberships (users'), one statement.
 * Listed in FOREIGN_READS of test/platform/owners.test.ts.
 */
import type { Queryable } from '../../../platform/db/index.js';
import type { Group } from '../../groups/service.js';

export interface LoginDeviceRow {
  group_id: string;
  device_id: string;
  auth: Group['auth'];
}

/** The unarchived devices of this id in the groups the account holds a role in (any group for a superuser). */
export function selectLoginDevices(db: Queryable, deviceId: string, userId: string, superuser: boolean): Promise<LoginDeviceRow[]> {
  return db.query<LoginDeviceRow>(
    `SELECT d.group_id, d.device_id, g.auth FROM devices d JOIN groups g USING (group_id)
       WHERE d.device_id = $1 AND NOT d.archived
         AND (EXISTS (SELECT 1 FROM memberships m WHERE m.group_id = d.group_id AND m.user_id = $2) OR $3)`,
    [deviceId, userId, superuser],
  );
}
