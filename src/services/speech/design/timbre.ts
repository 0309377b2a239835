/**
 * The tone of a designed voice, derived from the words of its prompt: gender words choose the pitch
 * band, age and depth words move the pitch inside it, brightness words move the upper harmonics. The
 * audio engine shapes a voice from its tone id, so the tone is the candidate id whose shape lies nearest
 * the target; a little of the prompt's hash keeps different prompts apart. Same prompt, same tone.
 */
import { createHash } from 'node:crypto';
import { voiceShape } from '../../../audio/voice.js';

const FEMALE = /\b(female|woman|women|girl|lady|feminine|mother|grandmother|she|her)\b|女/i;
const MALE = /\b(male|man|men|boy|gentleman|masculine|father|grandfather|he|his)\b|男/i;
const LOWER = /\b(deep|low|old|elderly|aged|mature|baritone|bass|husky|gravelly|senior|grandmother|grandfather|serious)\b|低沉|老/gi;
const HIGHER = /\b(young|child|kid|little|high|high-pitched|cheerful|sweet|teen|teenage|youthful|squeaky|lively)\b|年轻|甜/gi;
const BRIGHT = /\b(bright|crisp|clear|sharp|energetic|lively|cheerful|brilliant|vivid|loud)\b|清脆|明亮/gi;
const DARK = /\b(warm|soft|dark|gentle|calm|breathy|husky|mellow|smooth|soothing|deep)\b|温柔|温暖/gi;

const CANDIDATES = 512;

function count(re: RegExp, text: string): number {
  return (text.match(re) ?? []).length;
}

function brightness(h: number[]): number {
  // Upper harmonics' share: about 0.2 (dark) to 0.6 (bright) for the engine's ranges.
  const upper = h[2]! + h[3]! + h[4]! + h[5]!;
  return (upper - 0.33) / (1.27 - 0.33);
}

export function designedTone(prompt: string): string {
  const gender = FEMALE.test(prompt) ? 'female' : MALE.test(prompt) ? 'male' : 'voice';
  const band: [number, number] = gender === 'female' ? [165, 255] : gender === 'male' ? [85, 155] : [95, 240];
  const h = createHash('sha256').update(prompt.trim().toLowerCase()).digest();
  const jitter = (i: number) => (h[i]! / 255 - 0.5) * 0.16;
  const clamp = (x: number) => Math.max(0.02, Math.min(0.98, x));
  const pitch = clamp(0.5 + 0.28 * (count(HIGHER, prompt) - count(LOWER, prompt)) + jitter(0));
  const bright = clamp(0.5 + 0.3 * (count(BRIGHT, prompt) - count(DARK, prompt)) + jitter(1));
  let best = '';
  let bestScore = Infinity;
  for (let n = 0; n < CANDIDATES; n++) {
    const id = `design-${gender}-${n}`;
    const shape = voiceShape(id);
    const p = (shape.f0 - band[0]) / (band[1] - band[0]);
    const score = (p - pitch) ** 2 + 0.5 * (brightness(shape.harmonics) - bright) ** 2;
    if (score < bestScore) [best, bestScore] = [id, score];
  }
  return best;
}
