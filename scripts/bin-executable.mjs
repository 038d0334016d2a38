#!/usr/bin/env node
// Makes the package's `bin` file executable after a build. tsc writes files with the umask's
// mode (0644), so `npm run build && npm link` lost the exec bit on every rebuild (prepack
// included) and `agents` answered "Permission denied". Run by `npm run build`; an optional
// argument is another output folder (the built-binary test builds into its own).
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const outDir = process.argv[2] ?? join(root, 'dist');
for (const target of Object.values(pkg.bin ?? {})) {
  // `./dist/cli/main.js` → the same file under outDir.
  const file = join(outDir, relative('dist', target));
  const mode = statSync(file).mode;
  // Execute for whoever may read it (0644 → 0755).
  chmodSync(file, mode | ((mode & 0o444) >> 2));
}
