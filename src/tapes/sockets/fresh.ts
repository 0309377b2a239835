/**
 * A fresh value in the shape of a recorded one (the same length, digits for digits, hex for hex, the same separators),
 * drawn from the account's seeded stream: the same seed and the same sockets give the same fresh ids.
 */
import type { RandomStream } from '../../core/state/ids.js';

const HEX = '0123456789abcdef';

export function freshLike(recorded: string, random: RandomStream): string {
  const bytes = random.bytes(recorded.length);
  let out = '';
  for (let i = 0; i < recorded.length; i++) {
    const ch = recorded[i]!;
    const b = bytes[i]!;
    if (ch >= '0' && ch <= '9') out += String(i === 0 && recorded.length > 1 ? 1 + (b % 9) : b % 10);
    else if (ch >= 'a' && ch <= 'f') out += HEX[b % 16];
    else if (ch >= 'A' && ch <= 'F') out += HEX[b % 16]!.toUpperCase();
    else if (ch >= 'g' && ch <= 'z') out += String.fromCharCode(97 + (b % 26));
    else if (ch >= 'G' && ch <= 'Z') out += String.fromCharCode(65 + (b % 26));
    else out += ch;
  }
  return out;
}
