/**
 * The link between the sessions that hand out a room (calls, agent sessions) and the room server that
 * hosts it (platform/room/): each session area registers how to find a room by its name and what to do
 * when the user joins or the room is lost; the room server listens for the moment a session ends. Both
 * sides know only this module, so neither imports the other.
 */
import type { Emulator } from '../../../core/emulator.js';

/** What the room server needs to know of the session behind a room. */
export interface RoomHost {
  kind: 'call' | 'agent';
  sessionId: string;
  accountId: string;
  roomName: string;
  /** The identity in the session's token (the user). */
  userIdentity: string;
  /** The bot participant: `bot_identity` of a call, the agent's identity of an agent session. */
  botIdentity: string;
  botName: string;
  /** Whether the session still runs (a room of an ended session no longer exists). */
  live: boolean;
  /** Calls: the role (timbre) and language; agents: the agent id. */
  role?: string;
  language?: 'zh' | 'en';
  agentId?: string;
}

export interface RoomHostArea {
  find(roomName: string): RoomHost | undefined;
  /** The user's signalling and media are connected (an agent session goes in_call). */
  joined(host: RoomHost): void;
  /** The room was lost under a live session (the bot or the transport failed): the session fails. */
  lost(host: RoomHost): void;
  /** The bot answered a turn: a call keeps it (its context for `previous_session_id`). */
  turn(host: RoomHost, turn: { user: string; reply: string }): void;
}

interface Links {
  areas: RoomHostArea[];
  listeners: Set<(roomName: string) => void>;
}

const links = new WeakMap<Emulator, Links>();
function linksOf(emu: Emulator): Links {
  let l = links.get(emu);
  if (!l) {
    l = { areas: [], listeners: new Set() };
    links.set(emu, l);
  }
  return l;
}

/** A session area tells where its rooms are (once, when its routes are set up). */
export function registerRoomHosts(emu: Emulator, area: RoomHostArea): void {
  linksOf(emu).areas.push(area);
}

export function findRoomHost(emu: Emulator, roomName: string): { host: RoomHost; area: RoomHostArea } | undefined {
  for (const area of linksOf(emu).areas) {
    const host = area.find(roomName);
    if (host) return { host, area };
  }
  return undefined;
}

/** A session ended (stop, timeout, balance, fault): its room ends with it. */
export function roomSessionEnded(emu: Emulator, roomName: string): void {
  for (const fn of [...linksOf(emu).listeners]) fn(roomName);
}

/** The room server listens for ended sessions; returns the way to stop listening. */
export function onRoomSessionEnded(emu: Emulator, fn: (roomName: string) => void): () => void {
  const l = linksOf(emu);
  l.listeners.add(fn);
  return () => l.listeners.delete(fn);
}

/**
 * The room server's URL handed out as `rtc_url` / `wsUrl`: `EMULATOR_RTC_URL` when set, else the
 * platform listener (or `EMULATOR_PUBLIC_URL`) as ws(s)://; clients add `/rtc` themselves.
 */
export function roomServerUrl(emu: Emulator): string {
  if (emu.config.rtcUrl) return emu.config.rtcUrl;
  return emu.publicBase('platform').replace(/^http/, 'ws');
}
