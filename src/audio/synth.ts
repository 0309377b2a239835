import type { DialogueInput, SynthInput, SynthResult, SynthStream } from './types.js';

export interface StreamOptions {
  signal?: AbortSignal;
}

export async function synthesize(_input: SynthInput): Promise<SynthResult> {
  throw new Error('not implemented yet');
}
export async function synthesizeDialogue(_input: DialogueInput): Promise<SynthResult> {
  throw new Error('not implemented yet');
}
export function synthesizeStream(_input: SynthInput, _opts: StreamOptions = {}): SynthStream {
  throw new Error('not implemented yet');
}
export function synthesizeDialogueStream(_input: DialogueInput, _opts: StreamOptions = {}): SynthStream {
  throw new Error('not implemented yet');
}
