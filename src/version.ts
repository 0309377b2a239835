import { readFileSync } from 'node:fs';

/** Version of the package, read once from its package.json (src/ and dist/ both sit beside it). */
export const VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
})();
