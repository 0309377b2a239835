import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { launchChromium, otherOrigin, screenshotPath } from './chromium.js';

/**
 * A web app of another origin uses the emulator from a real browser: the speech service and the platform
 * TTS over fetch (preflighted: they carry Authorization / X-API-Key), a conversation socket with
 * `?api_key=`, and the audio of each decoded by the browser's own decoder.
 */
/* Browser globals used inside page.evaluate (the project compiles without the DOM library). */
declare const AudioContext: any, document: any;

const { emu, ctl } = emulatorForFile();
let browser: Browser;
let site: Awaited<ReturnType<typeof otherOrigin>>;

beforeAll(async () => {
  browser = await launchChromium();
  site = await otherOrigin('<!doctype html><title>client app</title><h1>client app</h1><pre id="log"></pre>');
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

describe('a page of another origin', () => {
  it('calls /v1/t2a_v2, the platform TTS and a conversation socket, and decodes their audio', async () => {
    await ctl.putAccount('browser-key', { balance_micro: 1_000_000 });
    // What the browser asks first: without an answer here the page can only see "Failed to fetch".
    const preflight = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
      method: 'OPTIONS',
      headers: { origin: site.url.slice(0, -1), 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(
      preflight.headers.get('access-control-allow-origin'),
      `CORS preflight of the speech listener answered HTTP ${preflight.status} without Access-Control-Allow-Origin`,
    ).toBeTruthy();

    const page = await browser.newPage();
    await page.goto(site.url);
    expect(new URL(page.url()).origin).not.toBe(new URL(emu.speechUrl).origin);

    const result = await page.evaluate(
      async ({ speechUrl, platformUrl }) => {
        const ctx = new AudioContext();
        const decode = async (bytes: ArrayBuffer) => {
          const audio = await ctx.decodeAudioData(bytes);
          return { seconds: audio.duration, sampleRate: audio.sampleRate, channels: audio.numberOfChannels };
        };
        const hexBytes = (hex: string) => new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16))).buffer;

        const t2a = await fetch(`${speechUrl}/v1/t2a_v2`, {
          method: 'POST',
          headers: { authorization: 'Bearer browser-key', 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'speech-02-turbo',
            text: 'Hello from a browser.',
            voice_setting: { voice_id: 'male-qn-qingse' },
            audio_setting: { format: 'mp3', sample_rate: 32000 },
          }),
        });
        const t2aBody: any = await t2a.json();
        const t2aTrace = t2a.headers.get('trace-id');

        const tts = await fetch(`${platformUrl}/v1/text-to-speech`, {
          method: 'POST',
          headers: { 'x-api-key': 'browser-key', 'content-type': 'application/json' },
          body: JSON.stringify({ voice_id: 'female_bright', generate_text: 'Hello there, friend.' }),
        });
        const ttsBytes = await tts.arrayBuffer();

        const socketAudio = await new Promise<{ bytes: ArrayBuffer; events: string[]; code: number }>((resolve, reject) => {
          const ws = new WebSocket(`${platformUrl.replace(/^http/, 'ws')}/api/v1/audio/conversation/stream-text?api_key=browser-key`);
          ws.binaryType = 'arraybuffer';
          const parts: Uint8Array[] = [];
          const events: string[] = [];
          ws.onopen = () => ws.send(JSON.stringify({ voice_id: 'english_tutor', text_input: 'bye' }));
          ws.onmessage = (m) => {
            if (typeof m.data === 'string') events.push(JSON.parse(m.data).type);
            else parts.push(new Uint8Array(m.data as ArrayBuffer));
          };
          ws.onerror = () => reject(new Error('conversation socket failed'));
          ws.onclose = (c) => {
            const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
            let at = 0;
            for (const p of parts) all.set(p, (at += p.length) - p.length);
            resolve({ bytes: all.buffer, events, code: c.code });
          };
        });

        return {
          t2a: {
            status: t2a.status,
            code: t2aBody.base_resp.status_code,
            trace: t2aTrace,
            claimedMs: t2aBody.extra_info.audio_length,
            decoded: await decode(hexBytes(t2aBody.data.audio)),
          },
          tts: { status: tts.status, contentType: tts.headers.get('content-type'), decoded: await decode(ttsBytes) },
          socket: { code: socketAudio.code, events: socketAudio.events, decoded: await decode(socketAudio.bytes) },
        };
      },
      { speechUrl: emu.speechUrl, platformUrl: emu.platformUrl },
    );
    await page.evaluate((r) => (document.getElementById('log')!.textContent = JSON.stringify(r, null, 2)), result);
    await page.screenshot({ path: screenshotPath('cors-client-page') });

    expect(result.t2a.status).toBe(200);
    expect(result.t2a.code).toBe(0);
    // An exposed header: readable by a script of another origin.
    expect(result.t2a.trace).toMatch(/.+/);
    expect(result.t2a.decoded.seconds).toBeGreaterThan(0.5);
    expect(Math.abs(result.t2a.decoded.seconds * 1000 - result.t2a.claimedMs)).toBeLessThan(150);
    expect(result.tts.status).toBe(200);
    expect(result.tts.contentType).toMatch(/audio\/wav/);
    expect(result.tts.decoded.seconds).toBeGreaterThan(0.5);
    expect(result.socket.code).toBe(1000);
    expect(result.socket.events).toContain('done');
    expect(result.socket.decoded.seconds).toBeGreaterThan(0.2);
    await page.close();
  }, 60_000);
});
