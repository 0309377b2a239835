/**
 * The room's WebRTC stays on the machine: gathering its candidates sends no datagram to any address but the
 * host's own and looks up no host name (no public STUN server is asked for a reflexive address), and the server is an ICE-lite agent
 * offering host candidates only. Watched on the emulator's own UDP sockets while a client joins.
 */
import dgram from 'node:dgram';
import dns from 'node:dns';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nonce, sessionsForFile } from './calls/calls-helpers.js';
import { openSignal, rtcUrl } from './room-signal-helpers.js';

const { c } = sessionsForFile();

/** Every destination a UDP socket of this process sent to, and every name it looked up, while the test ran. */
const destinations: string[] = [];
const send = dgram.Socket.prototype.send;
const lookup = dns.promises.lookup;
beforeAll(() => {
  // A STUN server named by host name is looked up first (a machine without DNS never sends to it; one with DNS would).
  dns.promises.lookup = ((hostname: string, ...rest: unknown[]) => {
    destinations.push(hostname);
    return (lookup as (...a: unknown[]) => Promise<unknown>)(hostname, ...rest);
  }) as typeof lookup;
  dgram.Socket.prototype.send = function (this: dgram.Socket, ...args: unknown[]) {
    // send(msg, [offset, length,] port, address, cb): the address is the string after the port.
    const at = args.findIndex((a, i) => i > 0 && typeof a === 'number' && typeof args[i + 1] === 'string');
    if (at > 0) destinations.push(args[at + 1] as string);
    return (send as (...a: unknown[]) => void).apply(this, args);
  } as typeof send;
});
afterAll(() => {
  dgram.Socket.prototype.send = send;
  dns.promises.lookup = lookup;
});

const ownAddresses = new Set(
  Object.values(networkInterfaces())
    .flat()
    .map((i) => i?.address),
);
ownAddresses.add('127.0.0.1');

describe("the room's ICE stays local", () => {
  it('a join gathers host candidates only, as an ICE-lite agent, and sends no datagram off the machine', async () => {
    const key = 'room-local-ice';
    const r = await c.post('/v1/audio/assistant/start', { client_nonce: nonce() }, key);
    const d = r.body.data as { rtc_url: string; token: string; session_id: string };
    const cl = await openSignal(rtcUrl(d.rtc_url, d.token));
    await cl.next('join');
    // The subscriber offer is sent once its candidates are gathered.
    const offer = (await cl.next('offer')).message.value as { sdp: string };
    // ICE-lite is a session attribute (RFC 8839), where libwebrtc reads it: the client then controls the checks.
    const [session, ...media] = offer.sdp.split(/\r\nm=/);
    expect(session!.split('\r\n')).toContain('a=ice-lite');
    for (const section of media) expect(section.split('\r\n')).not.toContain('a=ice-lite');
    const candidates = offer.sdp.split(/\r?\n/).filter((l) => l.startsWith('a=candidate:'));
    expect(candidates.length).toBeGreaterThan(0);
    for (const line of candidates) {
      const [, , , , address, , , type] = line.split(' ');
      expect(type, line).toBe('host');
      expect(ownAddresses.has(address), line).toBe(true);
    }
    // A moment for anything a gatherer still had under way.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(destinations.filter((a) => !ownAddresses.has(a))).toEqual([]);
    cl.ws.close();
    await cl.closed;
    await c.post('/v1/audio/assistant/stop', { session_id: d.session_id }, key);
  });
});
