// Preloaded into the CLI's process by the peer tests: any fetch to a host other than loopback fails
// at once with a message naming the address, so a test can never reach the network by accident.
const allowed = new Set(['127.0.0.1', 'localhost', '[::1]']);
const original = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  if (!allowed.has(url.hostname)) return Promise.reject(new Error(`peer test: refused a request to ${url.href} (loopback only)`));
  return original(input, init);
};
