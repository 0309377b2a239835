import { describe, expect, it } from 'vitest';
import { run } from '../helpers/tools.js';

describe('the tools the tests run', () => {
  it('a missing tool fails with one line naming it and how to install it', async () => {
    await expect(run('no-such-audio-tool', ['-v'])).rejects.toThrow(
      /^no-such-audio-tool is not installed, and the audio checks need it: install no-such-audio-tool$/,
    );
  });

  it('a tool that fails says its command and its own words', async () => {
    await expect(run('ffprobe', ['-v', 'error', '/no/such/file.wav'])).rejects.toThrow(/^ffprobe -v error \/no\/such\/file\.wav: .*No such file/);
  });
});
