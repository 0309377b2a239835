// checkUploadForm (platform/files/model.ts) called directly: one test per check, in the order the model
// runs them (a streaming problem other than the window, scene, the window, file present, its scene's
// size limit, not empty). The form is what the route read; its problems are the model's own errors.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/core/emulator.js';
import { PlatformError } from '../../src/services/platform/envelope.js';
import {
  checkUploadForm,
  checkUploadWindow,
  SCENE_LIMITS,
  tooLargeForAnyScene,
  UPLOADS_PER_HOUR,
  type UploadForm,
} from '../../src/services/platform/files/model.js';
import { accountOf, modelEmulator, thrown } from './model-emulator.js';
import { expectRefusal, messageOf } from './platform-refusal.js';

interface StoredFile {
  size: number;
  blob: string;
}

let emu: Emulator;
/** The window's own refusal, as the route met it while the file streamed. */
let windowFull: PlatformError;
beforeAll(async () => {
  emu = await modelEmulator();
  const account = accountOf(emu, 'files-busy');
  for (let i = 0; i < UPLOADS_PER_HOUR; i++) emu.limits.hit(emu.windowKey(account, 'upload'), 3_600_000, UPLOADS_PER_HOUR);
  windowFull = thrown(() => checkUploadWindow(emu, account)) as PlatformError;
});

const stored = (size: number): StoredFile => ({ size, blob: 'incoming/acct/0123' });
const form = (fields: Partial<UploadForm<StoredFile>>): UploadForm<StoredFile> => ({ scene: 'audio', file: stored(1000), fileAsField: false, ...fields });
const refusal = (fields: Partial<UploadForm<StoredFile>>) => thrown(() => checkUploadForm(form(fields)));
const param = (message: string) => ({ family: 'upload', codeOrKind: 'param', code: 10001, message }) as const;

describe('checkUploadForm: the checks in order', () => {
  it('checkUploadForm: a streaming problem other than the window (over the largest limit) → 20010 as met', () => {
    expectRefusal(refusal({ problem: tooLargeForAnyScene() }), {
      family: 'upload',
      codeOrKind: 20010,
      code: 20010,
      message: 'file: larger than 200 MB, the largest limit of any scene',
    });
  });

  it('checkUploadForm: scene absent or empty → 10001', () => {
    expectRefusal(refusal({ scene: undefined }), param('scene: is required (image, audio or video)'));
    expectRefusal(refusal({ scene: '' }), param('scene: is required (image, audio or video)'));
  });

  it('checkUploadForm: scene not image, audio or video → 10001', () => {
    expectRefusal(refusal({ scene: 'document' }), param('scene: unsupported scene "document"; use image, audio or video'));
  });

  it('checkUploadForm: the hourly window full → 10005', () => {
    expectRefusal(refusal({ problem: windowFull }), {
      family: 'upload',
      codeOrKind: 'rate',
      code: 10005,
      message: 'upload frequency limit exceeded: at most 30 uploads per hour; retry in 3600 s',
    });
  });

  it('checkUploadForm: no file part → 10001', () => {
    expectRefusal(refusal({ file: undefined }), param('file: is required'));
  });

  it('checkUploadForm: file sent as a text field → 10001', () => {
    expectRefusal(refusal({ file: undefined, fileAsField: true }), param('file: must be sent as a file part (with a filename), not a text field'));
  });

  it("checkUploadForm: file over its scene's limit (decimal MB) → 20010", () => {
    const over = (scene: keyof typeof SCENE_LIMITS, mb: number) =>
      ({
        family: 'upload',
        codeOrKind: 20010,
        code: 20010,
        message: `file: larger than the ${mb} MB limit of scene ${scene}`,
      }) as const;
    expectRefusal(refusal({ scene: 'image', file: stored(10_000_001) }), over('image', 10));
    expectRefusal(refusal({ scene: 'audio', file: stored(50_000_001) }), over('audio', 50));
    expectRefusal(refusal({ scene: 'video', file: stored(200_000_001) }), over('video', 200));
  });

  it('checkUploadForm: an empty file → 10001', () => {
    expectRefusal(refusal({ file: stored(0) }), param('file: is empty'));
  });

  it('checkUploadForm: a form that passes every check answers its scene and file (at the limit too)', () => {
    const file = stored(SCENE_LIMITS.image);
    expect(checkUploadForm(form({ scene: 'image', file }))).toEqual({ scene: 'image', file });
    expect(checkUploadForm(form({ scene: 'video', file: stored(1) }))).toMatchObject({ scene: 'video' });
  });

  it('checkUploadForm: the order — a streaming problem before scene, scene before the window', () => {
    expect(messageOf(refusal({ scene: 'document', problem: tooLargeForAnyScene() }))).toBe('file: larger than 200 MB, the largest limit of any scene');
    expect(messageOf(refusal({ scene: 'document', problem: windowFull }))).toBe('scene: unsupported scene "document"; use image, audio or video');
  });

  it('checkUploadForm: the order — the window before every check of the file (missing, too large, empty)', () => {
    expect(messageOf(refusal({ file: undefined, problem: windowFull }))).toMatch(/^upload frequency limit exceeded: /);
    expect(messageOf(refusal({ file: stored(0), problem: windowFull }))).toMatch(/^upload frequency limit exceeded: /);
    expect(messageOf(refusal({ scene: 'image', file: stored(10_000_001), problem: windowFull }))).toMatch(/^upload frequency limit exceeded: /);
  });
});
