import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';

/**
 * Legacy `POST /v1/text_to_speech`: no published rules, so not emulated. hermes-agent's MiniMax
 * provider, replayed: it posts a flat body and, when the answer is not `audio/*`, raises the
 * `base_resp` error it finds in the JSON. Its user must read there what to call instead.
 */
const { emu } = emulatorForFile({ plane: 'speech' });

/** What hermes-agent does with the answer of its legacy call (raw audio, or the API error it raises). */
async function hermesLegacy(url: string): Promise<{ audio?: Buffer; error?: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer hermes-key' },
    body: JSON.stringify({ model: 'speech-02-hd', text: 'Hello from the agent.', voice_id: 'English_expressive_narrator' }),
  });
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('audio/')) return { audio: Buffer.from(await res.arrayBuffer()) };
  const body = (await res.json()) as { base_resp?: { status_code?: number; status_msg?: string } };
  const code = body.base_resp?.status_code ?? -1;
  if (code !== 0) return { error: `MiniMax TTS API error (code ${code}): ${body.base_resp?.status_msg ?? 'unknown error'}` };
  return {};
}

describe('legacy POST /v1/text_to_speech', () => {
  it("hermes-agent's call (with its GroupId) gets a 404 in the speech error shape naming /v1/t2a_v2", async () => {
    const out = await hermesLegacy(`${emu.speechUrl}/v1/text_to_speech?GroupId=123`);
    expect(out.audio).toBeUndefined();
    expect(out.error).toBe(
      'MiniMax TTS API error (code 1000): not found: no operation at POST /v1/text_to_speech (the legacy T2A operation, which the emulator does not serve: use POST /v1/t2a_v2, with voice_id inside voice_setting; the audio comes back as hex in data.audio)',
    );
  });

  it('the answer itself: HTTP 404, base_resp 1000, trace id in body and headers; T2A Pro likewise; other paths keep the plain text', async () => {
    const res = await fetch(`${emu.speechUrl}/v1/t2a_pro`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: '{}',
    });
    const body = (await res.json()) as { trace_id: string; base_resp: { status_code: number; status_msg: string } };
    expect(res.status).toBe(404);
    expect(body.base_resp.status_code).toBe(1000);
    expect(body.base_resp.status_msg).toContain('the legacy T2A Pro operation, which the emulator does not serve: use POST /v1/t2a_v2');
    expect(res.headers.get('trace-id')).toBe(body.trace_id);
    const other = (await (await fetch(`${emu.speechUrl}/v1/nothing_here`, { method: 'POST', headers: { authorization: 'Bearer k' } })).json()) as typeof body;
    expect(other.base_resp.status_msg).toBe('not found: no operation at POST /v1/nothing_here');
  });
});
