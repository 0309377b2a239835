// Three emulators behind Debian's haproxy, with the configuration docs/scaling.md prints (the suite: scaling-suite.ts).
import { scalingSuite } from './scaling-suite.js';

scalingSuite('haproxy');
