/**
 * Writes `schemas/<kind>.schema.json` from the zod config schemas.
 * Run: `npx tsx scripts/gen-schemas.ts` (add `--check` to fail when the files are stale).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { configJsonSchemas } from '../src/config/json-schema.js';

const outDir = join(import.meta.dirname, '..', 'schemas');
const check = process.argv.includes('--check');
await mkdir(outDir, { recursive: true });
let stale = 0;
for (const [kind, schema] of Object.entries(configJsonSchemas())) {
  const file = join(outDir, `${kind}.schema.json`);
  const text = `${JSON.stringify(schema, null, 2)}\n`;
  if (check) {
    const current = await readFile(file, 'utf8').catch(() => '');
    if (current !== text) {
      stale++;
      process.stderr.write(`${file} is out of date; run npx tsx scripts/gen-schemas.ts\n`);
    }
  } else {
    await writeFile(file, text);
    process.stdout.write(`wrote ${file}\n`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
