/** The recognizer lives in services/shared (the speech service's cloning reads it too). */
export * from '../../shared/recognize.js';
