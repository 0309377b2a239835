/**
 * The rooms of one emulator: made on the first join of a live session's room, ended with the session
 * (stop, heartbeat timeout, balance, should_close) or by a reset, and listed in the state view (rooms,
 * participants, tracks) under the session's account.
 */
import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { areaOf } from '../../../core/state/areas.js';
import type { Emulator, StateArea } from '../../../core/emulator.js';
import { onRoomSessionEnded } from '../shared/room-hosts.js';
import { startRoomBot } from './bot/index.js';
import { PING_TIMING, type PingTiming } from './messages.js';
import { Participant } from './participant.js';
import { Room } from './room.js';
import type { JoinCheck } from './tokens.js';

interface RoomsArea extends StateArea {
  rooms: Map<string, Room>;
  /** The ping timing told to (and enforced on) the next joins. */
  ping: PingTiming;
}

export function roomsArea(emu: Emulator): RoomsArea {
  return areaOf(emu, 'rooms', () => {
    const rooms = new Map<string, Room>();
    const area: RoomsArea = {
      name: 'rooms',
      rooms,
      ping: PING_TIMING,
      reset(accountId) {
        for (const room of [...rooms.values()]) if (accountId === undefined || room.host.accountId === accountId) room.end();
      },
      view(accountId) {
        const mine = [...rooms.values()].filter((r) => r.host.accountId === accountId);
        return mine.length ? mine.map((r) => r.view()) : undefined;
      },
    };
    onRoomSessionEnded(emu, (roomName) => rooms.get(roomName)?.end());
    return area;
  });
}

/**
 * An internal setting with no flag: a shorter ping timing for the joins that follow (the room's tests use it so
 * a silent client is removed without waiting LiveKit's 15 s); no argument restores LiveKit's timing.
 */
export function setPingTiming(emu: Emulator, ping: PingTiming = PING_TIMING): void {
  roomsArea(emu).ping = ping;
}

/** A checked join: the room (made on its first join) gets the connection. */
export function joinRoom(emu: Emulator, socket: WebSocket, req: FastifyRequest, check: Extract<JoinCheck, { ok: true }>): void {
  const area = roomsArea(emu);
  let room = area.rooms.get(check.host.roomName);
  if (!room || room.ended) {
    room = new Room(emu, check.host, check.area, startRoomBot, (ended) => {
      if (area.rooms.get(ended.name) === ended) area.rooms.delete(ended.name);
    });
    area.rooms.set(room.name, room);
  }
  new Participant(emu, room, socket, req, check.grants, area.ping).start();
}
