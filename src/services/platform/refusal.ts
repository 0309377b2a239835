import type { KeyTexts, Refusal } from '../../core/http/admission.js';
import { PlatformError } from './envelope.js';
import { codeOfHttpStatus, type Family } from './families.js';

/**
 * A refusal of the admission path (core/http/admission.ts) as a platform error of the route's family: the
 * injected code as-is, an injected HTTP status with its family code, the key texts of where the key
 * travels (header, query, tool argument), a missing capability as `forbidden` where the family has it.
 */
export function refusalError(refusal: Refusal, family: Family, keyTexts: KeyTexts): PlatformError {
  switch (refusal.kind) {
    case 'fault_code':
      return new PlatformError(refusal.code, `injected fault: error ${refusal.code}`);
    case 'fault_status':
      return new PlatformError(codeOfHttpStatus(family, refusal.status), `injected fault: HTTP ${refusal.status}`, refusal.status);
    case 'key':
      return new PlatformError('auth', keyTexts[refusal.problem]);
    case 'capability':
      return new PlatformError(family.codes.forbidden ? 'forbidden' : 'auth', `this API key lacks the ${refusal.capability} capability`);
    case 'upstream':
      return new PlatformError(codeOfHttpStatus(family, refusal.status), refusal.message, refusal.status);
    case 'close_ws':
      // Only sockets take `close_ws`, and they close instead of answering.
      return new PlatformError('internal', 'injected fault: close_ws');
  }
}

/** Key texts of the platform's HTTP operations (`X-API-Key`). */
export const HEADER_KEY_TEXTS: KeyTexts = {
  missing: 'X-API-Key header is missing',
  invalid: 'X-API-Key is not a valid API key',
  disabled: 'X-API-Key belongs to a disabled API key',
};
