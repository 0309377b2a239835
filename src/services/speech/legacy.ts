/**
 * Legacy speech operations that clients still call (hermes-agent posts a flat `{model, text,
 * voice_id}` to `/v1/text_to_speech` and expects raw audio back). No published page gives their
 * rules, so they are not emulated: their 404 names the current operation to use instead.
 */
const LEGACY_OPERATIONS: Record<string, string> = {
  '/v1/text_to_speech': 'the legacy T2A operation',
  '/v1/t2a_pro': 'the legacy T2A Pro operation',
};

/** The not-found message, with the way to the current operation when the path is a legacy one. */
export function notFoundMessage(path: string, message: string): string {
  const legacy = LEGACY_OPERATIONS[path.replace(/\/+$/, '')];
  if (!legacy) return message;
  return `${message} (${legacy}, which the emulator does not serve: use POST /v1/t2a_v2, with voice_id inside voice_setting; the audio comes back as hex in data.audio)`;
}
