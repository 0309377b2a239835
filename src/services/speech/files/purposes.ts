/**
 * What each upload purpose accepts (rule E18): the documented voice and text purposes are sniffed and
 * capped at 20 MB; `video_understanding` and `video_generation_input` take the documented containers
 * and sizes and are kept 7 days; `retrieval` (the official CLI's default) is stored as it came, without
 * content checks, and no synthesis or clone operation accepts it. A refused video upload is HTTP 400.
 */
import { sniffFormat } from '../../../audio/probe.js';
import { invalidParams, SpeechError } from '../errors.js';

export const UPLOAD_PURPOSES = ['voice_clone', 'prompt_audio', 't2a_async_input', 'video_understanding', 'video_generation_input', 'retrieval'] as const;
export type UploadPurpose = (typeof UPLOAD_PURPOSES)[number];

/** Documented list purposes, plus `t2a_async` (named in the page's description) and `retrieval`. */
export const LIST_PURPOSES = ['voice_clone', 'prompt_audio', 't2a_async_input', 'video_generation_input', 't2a_async', 'retrieval'] as const;

/** Documented delete purposes, plus every purpose a stored file can have (a given purpose must match the file's). */
export const DELETE_PURPOSES = [
  ...new Set(['voice_clone', 'prompt_audio', 't2a_async', 't2a_async_input', 'video_generation', ...UPLOAD_PURPOSES]),
] as readonly string[];

export type FileFormat = 'mp3' | 'm4a' | 'wav' | 'txt' | 'zip' | 'tar' | 'mp4' | 'mov' | 'avi' | 'mkv' | 'jpg' | 'png' | 'webp' | 'heic' | 'bin';

const MB = 1024 * 1024;
/** Largest upload of the voice and text purposes (the documented voice limit; applied to text inputs too). */
export const MAX_UPLOAD_BYTES = 20 * MB;
/** Largest upload of any purpose: what the server reads before it knows the purpose (parts may come in any order). */
export const MAX_ANY_UPLOAD_BYTES = 50 * MB;
/** Retention of the video purposes, on the emulator clock. */
export const VIDEO_RETENTION_MS = 7 * 24 * 3600 * 1000;

const VIDEO_PURPOSES: readonly string[] = ['video_understanding', 'video_generation_input'];

/** Whether a purpose's uploads are kept for a limited time (from the upload, in ms). */
export function retentionOf(purpose: UploadPurpose): number | undefined {
  return VIDEO_PURPOSES.includes(purpose) ? VIDEO_RETENTION_MS : undefined;
}

/** The refusal of an upload: video purposes answer HTTP 400 (the page's "invalid file"), the others HTTP 200. */
export function uploadRefusal(purpose: string, detail: string): SpeechError {
  const err = invalidParams(detail);
  return VIDEO_PURPOSES.includes(purpose) ? new SpeechError(err.code, err.message, 400) : err;
}

const ascii = (b: Buffer, at: number, s: string) => b.length >= at + s.length && b.toString('latin1', at, at + s.length) === s;

/** The ISO-BMFF major brand (`ftyp`), trimmed, or undefined. */
function brandOf(b: Buffer): string | undefined {
  return ascii(b, 4, 'ftyp') && b.length >= 12 ? b.toString('latin1', 8, 12).trim() : undefined;
}

const HEIF_BRANDS = ['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1', 'heif'];
const AUDIO_BRANDS = ['M4A', 'M4B', 'M4P'];

/** Video containers by their bytes: MP4, QuickTime, AVI, Matroska. */
export function sniffVideo(b: Buffer): FileFormat | undefined {
  const brand = brandOf(b);
  if (brand !== undefined) {
    if (brand === 'qt') return 'mov';
    if (HEIF_BRANDS.includes(brand) || AUDIO_BRANDS.includes(brand)) return undefined;
    return 'mp4';
  }
  // Old QuickTime files start with an atom other than ftyp.
  if (['moov', 'mdat', 'wide', 'free', 'skip'].some((atom) => ascii(b, 4, atom))) return 'mov';
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'AVI ')) return 'avi';
  // EBML header whose doctype is matroska (webm is not listed).
  if (b.length >= 4 && b.readUInt32BE(0) === 0x1a45dfa3 && b.subarray(0, 64).includes('matroska')) return 'mkv';
  return undefined;
}

/** Images by their bytes: JPEG, PNG, WebP, HEIC/HEIF. */
export function sniffImage(b: Buffer): FileFormat | undefined {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpg';
  if (ascii(b, 0, '\x89PNG\r\n\x1a\n')) return 'png';
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return 'webp';
  const brand = brandOf(b);
  if (brand !== undefined && HEIF_BRANDS.includes(brand)) return 'heic';
  return undefined;
}

/** Whether bytes read as UTF-8 text (a multi-byte character cut at the end of the head is fine). */
function looksLikeText(head: Buffer, whole: boolean): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(whole ? head : head.subarray(0, Math.max(0, head.length - 3)));
    return true;
  } catch {
    return false;
  }
}

const sizeText = (bytes: number) => `${bytes / MB} MB`;
const GENERATION_ACCEPTS =
  'purpose video_generation_input accepts images (jpg, jpeg, png, webp, heic, heif) up to 30 MB, video (mp4, mov) up to 50 MB or audio (wav, mp3) up to 15 MB';

/** The refusal of a file over the largest size its purpose takes (also when reading stopped at 50 MB). */
export function oversizeRefusal(purpose: UploadPurpose, kind?: string, limit = MAX_ANY_UPLOAD_BYTES): SpeechError {
  switch (purpose) {
    case 'voice_clone':
    case 'prompt_audio':
    case 't2a_async_input':
      return uploadRefusal(purpose, `file is larger than ${sizeText(MAX_UPLOAD_BYTES)}, the upload limit`);
    case 'video_generation_input':
      return uploadRefusal(purpose, `file is ${kind ? `${kind} ` : ''}larger than ${sizeText(limit)}; ${GENERATION_ACCEPTS}`);
    default:
      return uploadRefusal(purpose, `file is larger than ${sizeText(MAX_ANY_UPLOAD_BYTES)}, the limit of purpose ${purpose}`);
  }
}

/**
 * The stored format of an upload by its bytes and size, or the purpose's refusal. `head` is the start of
 * the file (all of it when `whole`).
 */
export function checkUpload(purpose: UploadPurpose, head: Buffer, size: number, whole: boolean): FileFormat {
  const refuse = (detail: string) => uploadRefusal(purpose, detail);
  switch (purpose) {
    case 'retrieval': {
      if (size > MAX_ANY_UPLOAD_BYTES) throw oversizeRefusal(purpose);
      return 'bin';
    }
    case 'video_understanding': {
      const video = sniffVideo(head);
      if (!video) throw refuse('file content is not a video; purpose video_understanding accepts mp4, avi, mov or mkv');
      if (size > MAX_ANY_UPLOAD_BYTES) throw oversizeRefusal(purpose);
      return video;
    }
    case 'video_generation_input': {
      const image = sniffImage(head);
      const video = image ? undefined : sniffVideo(head);
      const audio = image || video ? undefined : sniffFormat(head);
      const [kind, format, limit] =
        image !== undefined
          ? ['an image', image, 30 * MB]
          : video === 'mp4' || video === 'mov'
            ? ['a video', video, 50 * MB]
            : audio === 'wav' || audio === 'mp3'
              ? ['audio', audio, 15 * MB]
              : [undefined, undefined, 0];
      if (!kind || !format) throw refuse(`file content is ${video ? `a ${video} video` : 'not a supported image, video or audio'}; ${GENERATION_ACCEPTS}`);
      if (size > limit) throw oversizeRefusal(purpose, kind, limit);
      return format as FileFormat;
    }
    case 't2a_async_input': {
      if (size > MAX_UPLOAD_BYTES) throw oversizeRefusal(purpose);
      if (head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && (head[2] === 3 || head[2] === 5)) return 'zip';
      if (looksLikeText(head, whole)) return 'txt';
      throw refuse('file content is neither UTF-8 text nor a zip archive; purpose t2a_async_input accepts txt or zip');
    }
    default: {
      if (size > MAX_UPLOAD_BYTES) throw oversizeRefusal(purpose);
      const format = sniffFormat(head);
      if (format === 'mp3' || format === 'm4a' || format === 'wav') return format;
      throw refuse(`file content is ${format ?? 'not recognised audio'}; purpose ${purpose} accepts mp3, m4a or wav`);
    }
  }
}

export const CONTENT_TYPES: Record<FileFormat, string> = {
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  wav: 'audio/wav',
  txt: 'text/plain; charset=utf-8',
  zip: 'application/zip',
  tar: 'application/x-tar',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  avi: 'video/x-msvideo',
  mkv: 'video/x-matroska',
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  heic: 'image/heic',
  bin: 'application/octet-stream',
};
