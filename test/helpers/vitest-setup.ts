/** Run before every test file (vitest.config.ts setupFiles). */
import { afterEach } from 'vitest';
import { takeMismatches } from './response-check.js';

// An answer that its documented schema does not describe fails the test that asked for it.
afterEach(() => {
  const found = takeMismatches();
  if (found.length === 0) return;
  throw new Error(`answers that do not match their documented schema:\n${found.map((m) => `${m.request} → ${m.status}: ${m.errors.join('; ')}`).join('\n')}`);
});
