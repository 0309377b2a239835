/** Imported first by the CLI (main.ts): on a Node.js too old, one line on stderr and exit 1 (see node-version.ts). */
import { nodeVersionProblem } from './node-version.js';

const problem = nodeVersionProblem();
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
