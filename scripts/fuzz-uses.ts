import type { Audio } from './fuzz-media.js';
import { authOf, endpoint, hit, jsonHeaders, type Hit, type Outcome, type Target } from './fuzz-oracle.js';

/**
 * Sequences of the fuzz families that hand generated media to the rules that read it: an upload and
 * its use (detection, diarization, recognition, cloning, what the listener heard), and an async task
 * from a generated zip whose tar is checked for members outside the task's folder.
 */
/** Uploads `media` (platform files or speech files with `purpose`); the object key or file id, or the failed outcome. */
async function upload(t: Target, service: 'speech' | 'platform', media: Audio, purpose = 'voice_clone'): Promise<Hit & { id?: string }> {
  const boundary = 'fzmedia';
  const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const body = Buffer.concat([
    Buffer.from(field(service === 'speech' ? 'purpose' : 'scene', service === 'speech' ? purpose : 'audio')),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="in.${media.ext}"\r\nContent-Type: ${media.type}\r\n\r\n`),
    media.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const r = await hit(
    t,
    endpoint(service, 'POST', '/v1/files/upload'),
    '/v1/files/upload',
    { ...authOf(service), 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
  );
  return { ...r, id: service === 'speech' ? r.json?.file?.file_id : r.json?.data?.object_key };
}

/** Hands `media` to one rule that decodes input audio. */
export async function useAudio(t: Target, use: string, media: Audio): Promise<Outcome> {
  const post = (service: 'speech' | 'platform', url: string, body: unknown) =>
    hit(t, endpoint(service, 'POST', url), url, jsonHeaders(service), Buffer.from(JSON.stringify(body)));
  switch (use) {
    case 'detect':
    case 'stt': {
      const [service, url, field] =
        use === 'detect' ? (['platform', '/v1/audio/ai-detect', 'audio'] as const) : (['speech', '/v1/speech_to_text', 'file'] as const);
      const b = 'fzdetect';
      const body = Buffer.concat([
        Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="model"\r\n\r\nasr-1.0\r\n`),
        Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="${field}"; filename="in.${media.ext}"\r\nContent-Type: ${media.type}\r\n\r\n`),
        media.bytes,
        Buffer.from(`\r\n--${b}--\r\n`),
      ]);
      return hit(t, endpoint(service, 'POST', url), url, { ...authOf(service), 'content-type': `multipart/form-data; boundary=${b}` }, body);
    }
    case 'recognize':
      return post('platform', '/v1/speech-to-text', { audio_data: media.bytes.toString('base64'), audio_format: 'pcm16' });
    case 'hear':
      return hit(t, endpoint('platform', 'POST', '/_emulator/hear'), '/_emulator/hear', { 'content-type': media.type }, media.bytes);
    case 'detect-json':
    case 'diarize':
    case 'voice-save': {
      const up = await upload(t, 'platform', media);
      if (up.problem || !up.id) return up;
      if (use === 'diarize') return post('platform', '/v1/diarize', { object_key: up.id });
      if (use === 'voice-save') return post('platform', '/v1/voice/save', { voice_id: 'fuzz_media', ref_audio: up.id, ref_text: 'a reference text' });
      return post('platform', '/v1/audio/ai-detect', { audio_url: up.id });
    }
    default: {
      // Cloning reads a sample (voice_clone) or a prompt (prompt_audio) whole, up to its cap.
      const up = await upload(t, 'speech', media, use === 'clone' ? 'voice_clone' : 'prompt_audio');
      if (up.problem || !up.id) return up;
      if (use === 'clone') return post('speech', '/v1/voice_clone', { file_id: up.id, voice_id: `FuzzClone${Date.now() % 1e6}` });
      return post('speech', '/v1/voice_clone', { file_id: up.id, voice_id: 'FuzzClone1', clone_prompt: { prompt_audio: up.id, prompt_text: 'Hello.' } });
    }
  }
}

/** Uploads a zip as an async input, creates a task from it and, when it succeeds, reads its tar's member names. */
export async function asyncTask(t: Target, zip: Buffer): Promise<Outcome> {
  const up = await upload(t, 'speech', { kind: 'garbage', what: 'zip', bytes: zip, ext: 'zip', type: 'application/zip' }, 't2a_async_input');
  if (up.problem || !up.id) return up;
  const create = endpoint('speech', 'POST', '/v1/t2a_async_v2');
  const body = {
    model: 'speech-02-hd',
    text_file_id: up.id,
    voice_setting: { voice_id: 'male-qn-qingse' },
    audio_setting: { format: 'mp3', sample_rate: 16000 },
  };
  const task = await hit(t, create, '/v1/t2a_async_v2', jsonHeaders('speech'), Buffer.from(JSON.stringify(body)));
  const id = task.json?.task_id;
  if (task.problem || !id) return task;
  // The clock moves the task to its end; its tar is then read for member names.
  await fetch(`${t.platformUrl}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"advance_ms":3600000}' });
  const query = endpoint('speech', 'GET', '/v1/query/t2a_async_query_v2');
  const q = await hit(t, query, `/v1/query/t2a_async_query_v2?task_id=${id}`, authOf('speech'));
  if (q.problem || q.json?.status !== 'Success') return { status: `${task.status}/${q.json?.status ?? q.status}`, problem: q.problem };
  const content = await fetch(`${t.speechUrl}/v1/files/retrieve_content?file_id=${q.json.file_id}`, {
    headers: authOf('speech'),
    signal: AbortSignal.timeout(t.timeoutMs),
  });
  const tar = Buffer.from(await content.arrayBuffer());
  const bad = tarNames(tar).find((n) => n.startsWith('/') || n.split(/[\\/]/).includes('..') || !n.startsWith(`${id}/`));
  return { status: 'Success', problem: bad ? `tar member ${JSON.stringify(bad)} leaves the task's folder` : null };
}

/** Member names of a tar (ustar name and prefix; a pax `path` record wins). */
function tarNames(tar: Buffer): string[] {
  const names: string[] = [];
  let pax: string | undefined;
  for (let at = 0; at + 512 <= tar.length;) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const str = (from: number, len: number) =>
      h
        .subarray(from, from + len)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = parseInt(str(124, 12).trim() || '0', 8);
    const type = str(156, 1);
    const data = tar.subarray(at + 512, at + 512 + size);
    if (type === 'x') pax = /\d+ path=([^\n]*)\n/.exec(data.toString('utf8'))?.[1];
    else {
      const prefix = str(345, 155);
      names.push(pax ?? (prefix ? `${prefix}/${str(0, 100)}` : str(0, 100)));
      pax = undefined;
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}
