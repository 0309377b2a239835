// Preloaded into an emulator process by lazy-modules.test.ts: records every package the process
// resolves (ESM import and require alike) and, on SIGUSR2, prints their names as one JSON line on stderr.
import module from 'node:module';

const packages = new Set();
module.registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(resolved.url)?.[1];
    if (name) packages.add(name);
    return resolved;
  },
});
process.on('SIGUSR2', () => process.stderr.write(`loaded-packages ${JSON.stringify([...packages].sort())}\n`));
