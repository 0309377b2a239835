import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { req, t2a } from './helpers.js';
import { rms, samplesOf } from '../helpers/audio.js';
import { ffprobe } from '../helpers/ffprobe.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });

describe('output_format url and subtitles (addendum A3)', () => {
  it('data.audio is a signed link served without credentials, valid 24 h on the emulator clock, then 403', async () => {
    const r = await t2a(emu.speechUrl, req({ output_format: 'url', audio_setting: { format: 'mp3', sample_rate: 24000 } }, 'Fetch me later.'));
    expect(r.body.base_resp.status_code).toBe(0);
    const link: string = r.body.data.audio;
    expect(link.startsWith(`${emu.speechUrl}/download/`)).toBe(true);
    expect(link).toMatch(/\.mp3\?expires=\d+&sig=/);
    const got = await fetch(link);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('audio/mpeg');
    const bytes = Buffer.from(await got.arrayBuffer());
    expect(bytes.length).toBe(r.body.extra_info.audio_size);
    const p = await ffprobe(bytes, { ext: 'mp3' });
    expect(p.sampleRate).toBe(24000);
    expect(Math.abs(p.durationMs - r.body.extra_info.audio_length)).toBeLessThanOrEqual(25);

    const tampered = link.replace(/sig=./, (m) => (m.endsWith('A') ? 'sig=B' : 'sig=A'));
    expect((await fetch(tampered)).status).toBe(403);
    await ctl.advance(24 * 3600 * 1000 - 60_000);
    expect((await fetch(link)).status).toBe(200);
    await ctl.advance(120_000);
    const expired = await fetch(link);
    expect(expired.status).toBe(403);
    expect(((await expired.json()) as any).base_resp.status_msg).toMatch(/expired/);
  });

  it('subtitle_enable: a JSON array of sentence segments with the true times of each sentence', async () => {
    const text = 'The first sentence is short. The second one is a little longer than the first!\nA new paragraph starts here.';
    const r = await t2a(emu.speechUrl, req({ subtitle_enable: true, audio_setting: { format: 'pcm', sample_rate: 16000 } }, text));
    expect(r.body.data.subtitle_file).toMatch(/-subtitles\.json\?expires=\d+&sig=/);
    const res = await fetch(r.body.data.subtitle_file);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const segs: any[] = (await res.json()) as any[];
    expect(segs.map((s: any) => s.text)).toEqual([
      'The first sentence is short.',
      'The second one is a little longer than the first!',
      'A new paragraph starts here.',
    ]);
    const cps = [...text];
    segs.forEach((s: any, i: number) => {
      expect(Object.keys(s).sort()).toEqual([
        'is_final_segment',
        'pronounce_text',
        'pronounce_text_begin',
        'pronounce_text_end',
        'text',
        'text_begin',
        'text_end',
        'time_begin',
        'time_end',
        'timestamped_words', // null for sentence subtitles (rule E16)
      ]);
      expect(cps.slice(s.text_begin, s.text_end).join('')).toBe(s.text);
      expect(s.is_final_segment).toBe(i === segs.length - 1);
      expect(s.time_end).toBeGreaterThan(s.time_begin);
      if (i > 0) expect(s.time_begin).toBeGreaterThan(segs[i - 1].time_end);
    });
    // True times: sound inside each sentence, silence in the pauses between sentences.
    const s = samplesOf(Buffer.from(r.body.data.audio, 'hex'));
    const at = (ms: number) => (ms / 1000) * 16000;
    for (const seg of segs) expect(rms(s, at(seg.time_begin), at(seg.time_end))).toBeGreaterThan(0.02);
    for (let i = 1; i < segs.length; i++) expect(rms(s, at(segs[i - 1].time_end) + 16, at(segs[i].time_begin) - 16)).toBeLessThan(0.002);
    expect(segs[segs.length - 1].time_end).toBeLessThanOrEqual(r.body.extra_info.audio_length);
  });

  it('sentences longer than 50 characters are split at word boundaries', async () => {
    const text = 'This sentence keeps going on and on without any stop so that it must be split into several shorter parts for subtitles';
    const r = await t2a(emu.speechUrl, req({ subtitle_enable: true, audio_setting: { format: 'pcm', sample_rate: 8000 } }, text));
    const segs = (await (await fetch(r.body.data.subtitle_file)).json()) as any[];
    expect(segs.length).toBeGreaterThan(2);
    for (const s of segs) {
      expect([...s.text].length).toBeLessThanOrEqual(50);
      expect(text.includes(s.text)).toBe(true);
      expect(/\w/.test(text[s.text_end] ?? ' ') && /\w/.test(text[s.text_end - 1]!)).toBe(false); // never inside a word
    }
  });
});

describe('reset', () => {
  it('resetting an account drops its generated files', async () => {
    const r = await t2a(emu.speechUrl, req({ output_format: 'url', audio_setting: { format: 'wav', sample_rate: 8000 } }, 'Gone soon'), {
      key: 'speech-reset-key',
    });
    expect((await fetch(r.body.data.audio)).status).toBe(200);
    await ctl.reset('speech-reset-key');
    // Removed by the time reset answers, so a file written right after it is never swept away.
    expect((await fetch(r.body.data.audio)).status).toBe(404);
    const again = await t2a(emu.speechUrl, req({ output_format: 'url', audio_setting: { format: 'wav', sample_rate: 8000 } }, 'Here again'), {
      key: 'speech-reset-key',
    });
    expect((await fetch(again.body.data.audio)).status).toBe(200);
  });
});

describe('backup listener and failover', () => {
  it('a rule on the primary takes only it down; the backup answers on the same state', async () => {
    const rule = await ctl.addFault({ service: 'speech', path: '/v1/t2a_v2', times: 'always', fault: { status: 503 } });
    expect(rule.status).toBe(201);
    await ctl.putAccount('speech-failover', { balance_micro: 10_000 });
    const body = req({ output_format: 'url', audio_setting: { format: 'mp3', sample_rate: 16000 } }, 'Failover');

    // The client recipe: try the primary, on a 5xx or a non-zero base_resp try the backup.
    const tried: string[] = [];
    let answer: Awaited<ReturnType<typeof t2a>> | null = null;
    for (const base of [emu.speechUrl, emu.speechBackupUrl]) {
      const r = await t2a(base, body, { key: 'speech-failover' });
      tried.push(`${r.status}/${r.body.base_resp.status_code}`);
      if (r.status === 200 && r.body.base_resp.status_code === 0) {
        answer = r;
        break;
      }
    }
    expect(tried).toEqual(['503/1000', '200/0']);
    // Served by the backup listener, billed on the shared account.
    expect(answer!.body.data.audio.startsWith(`${emu.speechBackupUrl}/download/`)).toBe(true);
    expect((await fetch(answer!.body.data.audio)).status).toBe(200);
    expect((await ctl.account('speech-failover')).body.balance_micro).toBe(10_000 - 8 * 100);
    const journal = await ctl.journal({ path: '/v1/t2a_v2', limit: 2 });
    expect(journal.body.entries.map((e: any) => [e.status, e.note ?? null])).toEqual([
      [200, 'backup listener'],
      [503, null],
    ]);

    // Naming the backup takes it down instead.
    await ctl.clearFaults();
    await ctl.addFault({ service: 'speech-backup', path: '/v1/t2a_v2', times: 'always', fault: { code: 1000 } });
    expect((await t2a(emu.speechBackupUrl, body)).body.base_resp.status_code).toBe(1000);
    expect((await t2a(emu.speechUrl, body)).body.base_resp.status_code).toBe(0);
    await ctl.clearFaults();
  });
});
