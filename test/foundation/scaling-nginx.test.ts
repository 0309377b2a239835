// Three emulators behind Debian's nginx, with the configuration docs/scaling.md prints (the suite: scaling-suite.ts).
import { scalingSuite } from './scaling-suite.js';

scalingSuite('nginx');
