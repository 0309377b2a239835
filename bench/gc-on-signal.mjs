// Bench only: a process started with --expose-gc and this module collects its garbage on SIGUSR2, so a bench can read
// the memory it holds (RSS after a full collection) apart from the garbage it has not collected yet.
process.on('SIGUSR2', () => globalThis.gc?.());
