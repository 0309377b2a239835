/**
 * `npm run bench`: performance figures (not tests). Each part is a module exporting one async function
 * that returns its figures; they run one after the other so they do not disturb each other.
 */
const parts: { name: string; module: string; fn: string }[] = [
  { name: 'start-up (compiled bin, start to healthy)', module: './startup.js', fn: 'benchStartup' },
  { name: 'server costs beside bare Fastify (start-up, error path, memory under load, upload)', module: './server.js', fn: 'benchServer' },
  { name: 'audio engine (synthesis + encoding)', module: './audio.js', fn: 'benchAudio' },
  { name: 'speech service over HTTP', module: './speech.js', fn: 'benchSpeech' },
  { name: 'audio speed goals (MP3 vs lamejs, first SSE event, event-loop stalls)', module: './speed-audio.js', fn: 'benchSpeedAudio' },
  { name: 'what the listener heard (POST /_emulator/hear, audio seconds per CPU second)', module: './hear.js', fn: 'benchHear' },
  { name: "a caller's audio (POST /_emulator/speak, audio seconds per CPU second, beside T2A of the same text)", module: './speak.js', fn: 'benchSpeak' },
  { name: 'the latency report over a journal of 10,000 audio streams (selection, aggregation)', module: './report.js', fn: 'benchReport' },
  { name: 'paced streams (first audio against ttfa_ms, delivered real-time factor against rtf)', module: './pacing.js', fn: 'benchPacing' },
  { name: 'persistence (lone writes, stalls seen by others and start time at 1k, 10k, 100k records)', module: './persistence.js', fn: 'benchPersistence' },
  { name: 'call room (join to first audio, reply latency, concurrent speaking bots, memory without rooms)', module: './room.js', fn: 'benchRoom' },
  { name: 'tapes (replayed beside own answers, first byte through a recorder beside the upstream)', module: './tapes.js', fn: 'benchTapes' },
  { name: 'voice engines (tones and speech: real-time factor, first audio of a long stream)', module: './voice-engine.js', fn: 'benchVoiceEngine' },
  { name: 'accepted decodes near the caps (audio seconds per CPU second, longest event-loop stall)', module: './decode-caps.js', fn: 'benchDecodeCaps' },
];

const only = process.argv.slice(2);
const results: Record<string, unknown> = {};
for (const part of parts) {
  if (only.length && !only.some((o) => part.module.includes(o))) continue;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(part.module)) as Record<string, unknown>;
  } catch (err) {
    console.log(`- ${part.name}: not available (${(err as Error).message.split('\n')[0]})`);
    continue;
  }
  const fn = mod[part.fn] as (() => Promise<Record<string, unknown>>) | undefined;
  if (!fn) continue;
  console.log(`- ${part.name} …`);
  results[part.name] = await fn();
  console.log(JSON.stringify(results[part.name], null, 2));
}
console.log(`\nnode ${process.version}, ${(await import('node:os')).cpus().length} cores`);
