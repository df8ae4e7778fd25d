/**
 * The device API's credential: what a driver application calls with (a driver session opened for
 * a device, or a device API key). The device API's routes (device/routes.ts, and the duty and
 * danger zones a device asks, duties/routes.ts) share these.
 */
import { groupRoles, type Principal } from '../../platform/http/access.js';
import { errors } from '../../platform/http/errors.js';

export const DEVICE = groupRoles(['driver'], 'DeviceApiRoleRequired', 'device');
export const deviceErrors = { 403: { DeviceCredentialRequired: 'the credential is not bound to a device of this group (a driver session opened with device_id, or a device API key)' } };
export const reportErrors = {
  ...deviceErrors,
  503: { PartitionBusy: 'the time partition the reports need (an old backlog) could not be made within 5 s; nothing was stored: send the batch again after the Retry-After header\'s seconds' },
};

/** spec-adjacent: a device can only write as itself, in its own group. */
export function deviceOf(principal: Principal | null, groupId: string): string {
  if (!principal?.device || principal.device.groupId !== groupId) {
    throw errors.forbidden('DeviceCredentialRequired', 'Use a driver session opened with POST /login?device_id=… or a device API key of this group');
  }
  return principal.device.deviceId;
}
