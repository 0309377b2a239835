import { describe, expect, it } from 'vitest';
import { call, emulatorForFile, type JsonReply } from '../helpers/emulator.js';

/**
 * A plain GET (no `Upgrade: websocket`) to a socket route is admitted once, in the lifecycle's order,
 * on every socket of both services (core/http/admission.ts `admitUpgrade`): an injected `status`, then the
 * key, then the capability, each answered in the socket family's HTTP shape; `close_ws` and a fault
 * code have no socket to be spoken on and are reported ignored; only a request admission lets in gets
 * the 426 "connect with an Upgrade request".
 */
const { emu, ctl } = emulatorForFile();

type Answer = JsonReply;

interface SocketFamily {
  name: string;
  service: 'speech' | 'platform';
  paths: string[];
  keyHeader(key: string): Record<string, string>;
  /** A fault code of the family (never taken by a plain GET). */
  faultCode: number;
  noKey(a: Answer): void;
  status503(a: Answer): void;
  noCapability(a: Answer): void;
  upgradeRequired(a: Answer): void;
  /** Capabilities of a key that lacks the socket's own. */
  otherCapabilities: string[];
}

const speechCode = (a: Answer) => [a.status, a.body.base_resp.status_code];
const platformCode = (a: Answer) => [a.status, a.body.error_code];

const FAMILIES: SocketFamily[] = [
  {
    name: 'speech synthesis sockets',
    service: 'speech',
    paths: ['/ws/v1/t2a_v2', '/ws/v1/t2a_v2_bidi'],
    keyHeader: (key) => ({ authorization: `Bearer ${key}` }),
    faultCode: 1002,
    // The speech service answers its errors with HTTP 200 and base_resp.
    noKey: (a) => {
      expect(speechCode(a)).toEqual([200, 1004]);
      expect(a.body.base_resp.status_msg).toContain('login fail');
    },
    status503: (a) => expect(speechCode(a)).toEqual([503, 1000]),
    noCapability: (a) => {
      expect(speechCode(a)).toEqual([200, 1004]);
      expect(a.body.base_resp.status_msg).toContain('(capability tts)');
    },
    upgradeRequired: (a) => {
      expect(speechCode(a)).toEqual([426, 2013]);
      expect(a.body.base_resp.status_msg).toContain('is a WebSocket endpoint');
    },
    otherCapabilities: ['recognition'],
  },
  {
    name: 'recognition stream',
    service: 'platform',
    paths: ['/v1/speech-to-text/stream'],
    keyHeader: (key) => ({ 'x-api-key': key }),
    faultCode: 10014,
    // The recognition family carries HTTP statuses.
    noKey: (a) => {
      expect(platformCode(a)).toEqual([401, 10003]);
      expect(a.body.error_message).toBe('X-API-Key header (or api_key query parameter) is missing');
    },
    status503: (a) => {
      expect(platformCode(a)).toEqual([503, 10000]);
      expect(a.body.error_message).toBe('injected fault: HTTP 503');
    },
    noCapability: (a) => expect(platformCode(a)).toEqual([401, 10003]),
    upgradeRequired: (a) => {
      expect(platformCode(a)).toEqual([426, 10001]);
      expect(a.body.error_message).toContain('is a WebSocket endpoint');
    },
    otherCapabilities: ['tts'],
  },
  {
    name: 'conversation sockets',
    service: 'platform',
    paths: ['/api/v1/audio/conversation/stream', '/api/v1/audio/conversation/stream-text'],
    keyHeader: (key) => ({ 'x-api-key': key }),
    faultCode: 20003,
    // The call family answers its errors with HTTP 200 and the envelope (an injected status keeps its status).
    noKey: (a) => {
      expect(platformCode(a)).toEqual([200, 20001]);
      expect(a.body.error_message).toBe('api_key query parameter is missing');
    },
    status503: (a) => {
      expect(platformCode(a)).toEqual([503, 50000]);
      expect(a.body.error_message).toBe('injected fault: HTTP 503');
    },
    noCapability: (a) => {
      expect(platformCode(a)).toEqual([200, 20001]);
      expect(a.body.error_message).toBe('this API key lacks the calls capability');
    },
    upgradeRequired: (a) => {
      expect(platformCode(a)).toEqual([426, 20003]);
      expect(a.body.error_message).toContain('is a WebSocket endpoint');
    },
    otherCapabilities: ['tts'],
  },
];

const IGNORED = 'x-emulator-fault-ignored';

for (const family of FAMILIES) {
  describe(`a plain GET to the ${family.name}`, () => {
    const base = () => (family.service === 'speech' ? emu.speechUrl : emu.platformUrl);
    const get = (path: string, headers: Record<string, string> = {}) => call(base() + path, { headers });
    const key = `plain-get-${family.service}`;

    it('without a key: the key refusal, before the 426', async () => {
      for (const path of family.paths) {
        const a = await get(path);
        family.noKey(a);
        expect(a.headers.get(IGNORED), path).toBeNull();
      }
    });

    it('an injected status=503 comes before the key, and is expressed', async () => {
      for (const path of family.paths) {
        const a = await get(path, { 'x-emulator-fault': 'status=503' });
        family.status503(a);
        expect(a.headers.get(IGNORED), path).toBeNull();
      }
    });

    it('an injected fault code has no socket to be spoken on: reported ignored, then the key, then the 426', async () => {
      for (const path of family.paths) {
        const fault = { 'x-emulator-fault': `code=${family.faultCode}` };
        const withKey = await get(path, { ...family.keyHeader(key), ...fault });
        family.upgradeRequired(withKey);
        expect(withKey.headers.get(IGNORED), path).toBe('code');
        const noKey = await get(path, fault);
        family.noKey(noKey);
        expect(noKey.headers.get(IGNORED), path).toBe('code');
      }
    });

    it('a key without the capability: the capability refusal', async () => {
      const lacking = `${key}-nocap`;
      await ctl.putAccount(lacking, { capabilities: family.otherCapabilities });
      for (const path of family.paths) family.noCapability(await get(path, family.keyHeader(lacking)));
    });

    it('a valid key: 426, connect with an Upgrade request', async () => {
      for (const path of family.paths) {
        const a = await get(path, family.keyHeader(key));
        family.upgradeRequired(a);
        expect(a.headers.get(IGNORED), path).toBeNull();
      }
    });
  });
}
