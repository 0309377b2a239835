/**
 * A few real requests against a running emulator (used by docker:verify on the image it carried out):
 * they touch every runtime dependency the image must hold — the MP3 encoder, the FLAC and MP3 decoders,
 * music-metadata, multipart uploads, WebSockets and the token signer — so a production image missing
 * one fails here rather than for a user.
 */
import WebSocket from 'ws';

export async function smokeTest(speechUrl: string, platformUrl: string, controlToken?: string): Promise<string[]> {
  const done: string[] = [];
  const key = 'docker-verify-smoke';
  const json = async (url: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { res, body: (await res.json()) as any };
  };
  const need = (ok: unknown, what: string, detail?: unknown) => {
    if (!ok) throw new Error(`${what} failed: ${JSON.stringify(detail)?.slice(0, 300)}`);
    done.push(what);
  };

  // Speech service: MP3 (lamejs with its patch) and FLAC, whole files.
  for (const format of ['mp3', 'flac'] as const) {
    const r = await json(
      `${speechUrl}/v1/t2a_v2`,
      { model: 'speech-02-hd', text: 'The image works.', voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format, sample_rate: 44100 } },
      { authorization: `Bearer ${key}` },
    );
    const audio = Buffer.from(r.body?.data?.audio ?? '', 'hex');
    const magic = format === 'mp3' ? audio[0] === 0xff : audio.subarray(0, 4).toString() === 'fLaC';
    need(r.body?.base_resp?.status_code === 0 && magic && r.body.extra_info.audio_sample_rate === 44100, `T2A ${format}`, r.body?.base_resp);
  }

  // Platform: synthesis, then recognition of that very audio (decoders + signature).
  const tts = await fetch(`${platformUrl}/v1/text-to-speech`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ voice_id: 'female_warm', generate_text: 'Hello from the image, how are you today?', audio_format: 'pcm' }),
  });
  const pcm24k = Buffer.from(await tts.arrayBuffer());
  need(tts.status === 200 && pcm24k.length > 48_000, 'platform synthesis', tts.status);
  const s24 = new Int16Array(pcm24k.buffer, pcm24k.byteOffset, pcm24k.length / 2);
  const s16 = new Int16Array(Math.floor((s24.length * 2) / 3));
  for (let i = 0; i < s16.length; i++) s16[i] = s24[Math.floor((i * 3) / 2)]!;
  const asr = await json(`${platformUrl}/v1/speech-to-text`, { audio_data: Buffer.from(s16.buffer).toString('base64') }, { 'x-api-key': key });
  need(asr.body?.text === 'Hello from the image, how are you today?', 'recognition of own audio', asr.body);

  // Upload (multipart), then cloning from it (music-metadata probe).
  const wav = await (
    await fetch(`${platformUrl}/v1/text-to-speech`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ voice_id: 'male_deep', generate_text: 'A short reference.' }),
    })
  ).arrayBuffer();
  const form = new FormData();
  form.append('scene', 'audio');
  form.append('file', new Blob([wav]), 'ref.wav');
  const up = (await (await fetch(`${platformUrl}/v1/files/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form })).json()) as any;
  need(up?.succeed, 'upload', up);
  const save = await json(
    `${platformUrl}/v1/voice/save`,
    { voice_id: 'smoke_voice', ref_audio: up.data.object_key, ref_text: 'A short reference.' },
    { 'x-api-key': key },
  );
  need(save.body?.succeed, 'voice cloning', save.body);

  // A call session (jose signs its room token).
  const call = await json(`${platformUrl}/v1/audio/assistant/start`, { client_nonce: '0b6e4f7a-1c2d-4e3f-8a9b-0c1d2e3f4a5b' }, { 'x-api-key': key });
  need(typeof call.body?.data?.token === 'string' && call.body.data.token.split('.').length === 3, 'call session token', call.body);

  // The text conversation socket (ws): a whole turn with MP3 reply frames.
  const events = await new Promise<string[]>((resolve, reject) => {
    const ws = new WebSocket(`${platformUrl.replace(/^http/, 'ws')}/api/v1/audio/conversation/stream-text?api_key=${key}`);
    const seen: string[] = [];
    const timer = setTimeout(() => reject(new Error(`conversation socket timed out after ${seen.join(',')}`)), 20_000);
    ws.on('open', () => ws.send(JSON.stringify({ voice_id: 'default', audio_format: 'pcm16', text_input: 'hello' })));
    ws.on('message', (data, binary) => seen.push(binary ? 'audio' : (JSON.parse(String(data)) as { type: string }).type));
    ws.on('close', () => {
      clearTimeout(timer);
      resolve(seen);
    });
    ws.on('error', reject);
  });
  need(events.includes('audio') && events.at(-1) === 'done', 'conversation socket', events);
  // The inspector's static files and the generated documents are served from dist/ (copied by the build).
  const page = await fetch(`${speechUrl}/_emulator/`);
  const script = await fetch(`${platformUrl}/_emulator/inspector/app.js`);
  need(page.status === 200 && (await page.text()).includes('/_emulator/inspector/app.js') && script.status === 200, 'inspector page', [
    page.status,
    script.status,
  ]);
  const openapi = await fetch(`${platformUrl}/_emulator/openapi/platform.json`, { headers: controlToken ? { authorization: `Bearer ${controlToken}` } : {} });
  need(openapi.status === 200 && ((await openapi.json()) as any).openapi === '3.1.0', 'OpenAPI document', openapi.status);

  return done;
}
