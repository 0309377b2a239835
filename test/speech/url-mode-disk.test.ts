/**
 * `output_format: "url"` streams the file to disk (issue item 7): a long WAV is never built in memory
 * (nor as hex), and the file behind the link has true header totals (WAV sizes, FLAC STREAMINFO),
 * byte for byte the file a hex answer carries.
 */
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { flacTest, req, t2a } from './helpers.js';
import { ffprobe } from '../helpers/ffprobe.js';

const { emu } = emulatorForFile({ plane: 'speech' });

async function download(link: string): Promise<Buffer> {
  const got = await fetch(link);
  expect(got.status).toBe(200);
  return Buffer.from(await got.arrayBuffer());
}

describe('URL mode writes the file as it is made', () => {
  it('10 min of 44.1 kHz stereo WAV: memory grows by far less than the file, and its header sizes are true', async () => {
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const text = `a${'<#99.99#>a'.repeat(6)}`;
    const body = req({ output_format: 'url', audio_setting: { format: 'wav', sample_rate: 44100, channel: 2 } }, text);
    const r = await t2a(emu.speechUrl, body).finally(() => clearInterval(timer));
    expect(r.body.base_resp.status_code).toBe(0);
    const size: number = r.body.extra_info.audio_size;
    expect(size).toBeGreaterThan(100_000_000);
    // One copy of the file is 100 MB; the one-shot encoding held it, its chunks and its hex (300 MB and more).
    expect((peak - rss0) / 1e6).toBeLessThan(size / 2e6);

    const file = await download(r.body.data.audio);
    expect(file.length).toBe(size);
    expect(file.readUInt32LE(4)).toBe(size - 8);
    expect(file.toString('latin1', 36, 40)).toBe('data');
    expect(file.readUInt32LE(40)).toBe(size - 44);
    const p = await ffprobe(file, { ext: 'wav' });
    expect(p.channels).toBe(2);
    expect(Math.abs(p.durationMs - r.body.extra_info.audio_length)).toBeLessThanOrEqual(25);
  }, 60_000);

  it('WAV and FLAC behind a link equal the hex answer byte for byte (true STREAMINFO totals and MD5)', async () => {
    for (const format of ['wav', 'flac'] as const) {
      const setting = { format, sample_rate: 22050 };
      const hex = await t2a(emu.speechUrl, req({ audio_setting: setting }, 'Streamed to disk, patched at the end.'));
      const url = await t2a(emu.speechUrl, req({ output_format: 'url', audio_setting: setting }, 'Streamed to disk, patched at the end.'));
      const file = await download(url.body.data.audio);
      expect(file.equals(Buffer.from(hex.body.data.audio, 'hex'))).toBe(true);
      expect(url.body.extra_info).toEqual(hex.body.extra_info);
      if (format === 'flac') await flacTest(file);
    }
  });
});
