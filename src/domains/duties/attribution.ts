/**
 * The duties a device's reports are attributed to, as the live stream asks (live/attribution.ts
 * caches the answers); the statements are in duties/queries/attribution.ts.
 */
export { selectDeviceGap as deviceGap, selectDevicesLatestDuty as devicesLatestDuty, selectDutyAt as dutyAt } from './queries/attribution.js';
export type { AttributedDutyRow, DeviceGapRow, DeviceLatestDutyRow } from './queries/attribution.js';
