/**
 * Voice cloning rules: save (create or overwrite), list (cursor paging), delete (idempotent).
 * Nothing of HTTP here: callers pass an authenticated account; failures throw PlatformError.
 */
export { findCustomVoice, listCustomVoices, type CustomVoice } from './store.js';
