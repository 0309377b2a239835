/** Imported first by the library entry (index.ts): on a Node.js too old, an Error saying which is needed (see node-version.ts). */
import { nodeVersionProblem } from './node-version.js';

const problem = nodeVersionProblem();
if (problem) throw new Error(problem);
