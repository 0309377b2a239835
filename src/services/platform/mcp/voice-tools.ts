import type { ToolDef } from './tool-kit.js';

/** voice_save, voice_list, voice_delete (wired once the voices model lands). */
export function voiceTools(): ToolDef[] {
  return [];
}
