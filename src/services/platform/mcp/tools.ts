import type { Emulator } from '../../../core/emulator.js';
import type { ToolDef } from './tool-kit.js';

/** The tools of /mcp (filled in as the platform operations land). */
export function mcpTools(_emu: Emulator): ToolDef[] {
  return [];
}
