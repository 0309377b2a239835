/** Language of a text the emulator spoke or heard: one rule with the recognizer (services/shared). */
export { languageOf } from '../../shared/recognize.js';
