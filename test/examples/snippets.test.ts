import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((file) => join('docs', file))];

/** The ```ts / ```js blocks of a markdown file. */
function codeBlocks(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^```(?:ts|js|typescript|javascript|mjs)\n([\s\S]*?)^```$/gm)].map(
    (match) => match[1]!,
  );
}

describe('snippets in the README and docs', () => {
  // Each snippet that names its file (`// examples/...` on its first line) is that file, which
  // test/examples/examples.int.test.ts runs: what readers copy is what the suite ran.
  it.each(DOCS)('%s: every snippet that names its file equals it', (file) => {
    for (const block of codeBlocks(file)) {
      const named = /^\/\/ (examples\/\S+)/.exec(block)?.[1];
      if (named === undefined) continue;
      expect(existsSync(join(ROOT, named)), named).toBe(true);
      expect(block.trimEnd(), `${file}: the block of ${named}`).toBe(
        readFileSync(join(ROOT, named), 'utf8').trimEnd(),
      );
    }
  });

  it('README: every TypeScript/JavaScript snippet is an example file the suite runs', () => {
    const blocks = codeBlocks('README.md');
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const block of blocks) expect(block).toMatch(/^\/\/ examples\/snippets\/\S+\.ts/);
  });

  it('docs: every page has a table of contents', () => {
    for (const file of DOCS.filter((name) => name.startsWith('docs'))) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(text, file).toMatch(/^Contents:\n\n- \[/m);
    }
  });
});
