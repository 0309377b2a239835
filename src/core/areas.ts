import type { Emulator, StateArea } from './emulator.js';

/**
 * The state area `name` of an emulator, made by `create` and registered on first use (reset, the
 * state view and snapshots then reach it). One name has one shape: the area's own module is the only
 * caller with that name, so the type it asks for is the type it registered.
 */
export function areaOf<A extends StateArea>(emu: Emulator, name: string, create: () => A): A {
  const existing = emu.areas.get(name);
  if (existing) return existing as A;
  const area = create();
  emu.registerArea(area);
  return area;
}
