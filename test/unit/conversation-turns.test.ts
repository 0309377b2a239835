import { describe, expect, it } from 'vitest';
import { appendPcm, INPUT_RATE, MAX_UTTERANCE_MS, newUtterance } from '../../src/services/platform/shared/utterance.js';
import { afterAudio, beforeMeta, endOfUtterance, PAUSE_MS, SILENCE_END_MS } from '../../src/services/platform/conversation/turn-taking.js';

/** PCM16 mono at the sockets' input rate: a loud tone, or silence. */
function pcm(ms: number, loud: boolean): Buffer {
  const n = Math.round((ms * INPUT_RATE) / 1000);
  const b = Buffer.alloc(n * 2);
  if (loud) for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(12000 * Math.sin((2 * Math.PI * 220 * i) / INPUT_RATE)), i * 2);
  return b;
}

describe('conversation turn-taking rules', () => {
  it('on /stream, voice waits for the pause; trailing silence of SILENCE_END_MS ends the utterance', () => {
    const u = newUtterance();
    appendPcm(u, pcm(400, true));
    expect(afterAudio('stream', u)).toEqual({ kind: 'wait', pauseMs: PAUSE_MS });
    appendPcm(u, pcm(SILENCE_END_MS - 100, false));
    expect(afterAudio('stream', u).kind).toBe('wait');
    appendPcm(u, pcm(200, false));
    expect(afterAudio('stream', u)).toEqual({ kind: 'end' });
  });

  it('on /stream-text only is_final ends an utterance; an utterance over the limit is 20003 on both', () => {
    const u = newUtterance();
    appendPcm(u, pcm(400, true));
    appendPcm(u, pcm(SILENCE_END_MS + 200, false));
    expect(afterAudio('text', u)).toEqual({ kind: 'listen' });
    const long = newUtterance();
    appendPcm(long, pcm(MAX_UTTERANCE_MS + 100, false));
    for (const mode of ['stream', 'text'] as const) {
      const r = afterAudio(mode, long);
      expect(r.kind).toBe('refuse');
      if (r.kind === 'refuse') expect([r.error.code, r.error.message]).toEqual(['20003', `audio: an utterance may last at most ${MAX_UTTERANCE_MS / 1000} s`]);
    }
  });

  it('an utterance is answered when it has audio and was ended by is_final or held voice', () => {
    const voiced = newUtterance();
    appendPcm(voiced, pcm(300, true));
    const quiet = newUtterance();
    appendPcm(quiet, pcm(300, false));
    const empty = newUtterance();
    expect(endOfUtterance('stream', voiced, false)).toEqual({ kind: 'answer' });
    expect(endOfUtterance('stream', quiet, true)).toEqual({ kind: 'answer' });
    // Ended by itself with no voice: nothing to answer.
    expect(endOfUtterance('stream', quiet, false)).toEqual({ kind: 'ignore' });
    // is_final with no audio: ignored on /stream, 20003 on /stream-text.
    expect(endOfUtterance('stream', empty, true)).toEqual({ kind: 'ignore' });
    const refused = endOfUtterance('text', empty, true);
    expect(refused.kind).toBe('refuse');
    if (refused.kind === 'refuse') expect([refused.error.code, refused.error.message]).toEqual(['20003', 'is_final: no audio was received before it']);
  });

  it('is_final or audio before meta is 20003', () => {
    expect(beforeMeta('is_final').code).toBe('20003');
    expect(beforeMeta('audio').message).toBe('binary audio arrived before the meta message');
  });
});
