/**
 * The Node.js the emulator needs (node:sqlite without a flag: 22.13), checked before anything imports
 * it: on an older Node, the CLI says so in one line instead of crashing with ERR_UNKNOWN_BUILTIN_MODULE
 * and a stack. Imports nothing, so it runs first wherever it is imported first.
 */
export const NODE_NEEDED = '22.13.0';

/** The one line that says which Node is needed, or null when this one will do. */
export function nodeVersionProblem(version: string = process.versions.node): string | null {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [needMajor, needMinor] = NODE_NEEDED.split('.').map(Number) as [number, number];
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  return `speech-emulator needs Node.js ${NODE_NEEDED} or newer (it uses node:sqlite); this is Node.js v${version}: install Node.js 24 LTS (e.g. nvm install 24)`;
}
