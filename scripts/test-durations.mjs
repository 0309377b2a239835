#!/usr/bin/env node
/**
 * Per-file test durations from vitest's JSON report (`--reporter=json --outputFile.json=…`, as .ci/run
 * writes it): prints the slowest files, and writes every file's duration as a Markdown table (the
 * report CI keeps beside its other artefacts), slowest first.
 *
 *   node scripts/test-durations.mjs vitest.json [report.md] [--top 15]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 15;
const [input, output] = args;
if (!input) {
  console.error('usage: node scripts/test-durations.mjs vitest.json [report.md] [--top 15]');
  process.exit(2);
}

const report = JSON.parse(readFileSync(input, 'utf8'));
const files = (report.testResults ?? [])
  .map((f) => ({
    file: relative(process.cwd(), f.name),
    seconds: Math.max(0, (f.endTime ?? 0) - (f.startTime ?? 0)) / 1000,
    tests: f.assertionResults?.length ?? 0,
    failed: (f.assertionResults ?? []).filter((a) => a.status === 'failed').length,
  }))
  .sort((a, b) => b.seconds - a.seconds);

const total = files.reduce((s, f) => s + f.seconds, 0);
const row = (f) => `| ${f.seconds.toFixed(1)} | ${f.tests} | ${f.failed || ''} | ${f.file} |`;
const table = (list) => ['| seconds | tests | failed | file |', '|---:|---:|---:|---|', ...list.map(row)].join('\n');

console.log(`slowest ${Math.min(top, files.length)} of ${files.length} test files (${total.toFixed(0)} s in all, summed over workers):`);
for (const f of files.slice(0, top)) console.log(`  ${f.seconds.toFixed(1).padStart(7)} s  ${String(f.tests).padStart(3)} tests  ${f.file}`);

if (output) {
  mkdirSync(dirname(output), { recursive: true });
  const when = new Date(report.startTime ?? Date.now()).toISOString();
  writeFileSync(
    output,
    `# Test durations per file\n\n${files.length} files, ${total.toFixed(0)} s summed over workers; run started ${when}.\n\n${table(files)}\n`,
  );
  console.log(`every file's duration: ${output}`);
}
