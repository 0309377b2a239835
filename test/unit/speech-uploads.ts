// Uploads of the speech service's files made straight into its file store, as /v1/files/upload leaves them.
import type { Account } from '../../src/core/state/accounts.js';
import type { Emulator } from '../../src/core/emulator.js';
import { addFile, blobOf, newFileId } from '../../src/services/speech/files/model.js';
import type { FileFormat } from '../../src/services/speech/files/purposes.js';

/** Stores bytes as an upload of the account with that purpose; answers its file id. */
export async function upload(emu: Emulator, who: Account, purpose: string, bytes: Buffer, format: FileFormat): Promise<number> {
  const fileId = newFileId(emu, who);
  const blob = blobOf(who, fileId, format);
  await emu.blobs.put(blob, bytes);
  addFile(emu, { file_id: fileId, account_id: who.id, bytes: bytes.length, created_at: 0, filename: `upload.${format}`, purpose, format, blob });
  return fileId;
}
