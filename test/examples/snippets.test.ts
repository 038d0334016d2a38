import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => join('docs', file)),
];

/**
 * The one ts/js block that is not an examples file, and the test that runs it instead: the
 * Studio graph module of docs/studio.md, which test/studio/consumer-graph.int.test.ts reads from
 * the page (the block after `heading`) and serves with the real LangGraph dev server.
 */
const RUN_ELSEWHERE = [
  {
    page: 'docs/studio.md',
    heading: '### Your own graphs in Studio',
    firstLine: "import { createStudioGraph } from '@agents/langgraph-mcp/studio';",
    test: 'test/studio/consumer-graph.int.test.ts',
  },
];

interface Block {
  code: string;
  /** The `#`-heading the block is under. */
  heading: string;
}

const SCRIPT_LANGUAGES = /^(?:ts|js|tsx|jsx|typescript|javascript|mjs|cjs|mts|cts)$/;

/** The ```ts / ```js blocks of a markdown file, indented ones included. */
function codeBlocks(file: string): Block[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const blocks: Block[] = [];
  // Every fenced block is matched (so a `# comment` in a shell block is no heading).
  const pattern = /^(#+ .*)$|^ *```(\S*)[^\n]*\n([\s\S]*?)^ *```$/gm;
  let heading = '';
  for (const match of text.matchAll(pattern)) {
    if (match[1] !== undefined) heading = match[1];
    else if (SCRIPT_LANGUAGES.test(match[2]!.toLowerCase()))
      blocks.push({ code: match[3]!, heading });
  }
  return blocks;
}

/** The examples file a block names on its first line (`// examples/...`). */
const namedFile = (block: Block): string | undefined =>
  /^\/\/ (examples\/\S+)/.exec(block.code)?.[1];

/** The SELF_CHECKING list of the test that runs the examples. */
const RUN_EXAMPLES = readFileSync(join(ROOT, 'test', 'examples', 'examples.int.test.ts'), 'utf8');

describe('snippets in the README and docs', () => {
  // What readers copy is what the suite ran: each block is an examples file, character for
  // character, and test/examples/examples.int.test.ts runs that file.
  it.each(DOCS)(
    '%s: every TypeScript/JavaScript block is an examples file the suite runs',
    (file) => {
      for (const block of codeBlocks(file)) {
        const named = namedFile(block);
        if (named === undefined) {
          const allowed = RUN_ELSEWHERE.find(
            (entry) =>
              entry.page === file &&
              entry.heading === block.heading &&
              block.code.startsWith(`${entry.firstLine}\n`),
          );
          expect(
            allowed,
            `${file} (under "${block.heading}"): a code block that is no examples file; make it ` +
              `one under examples/snippets/ and start the block with "// examples/snippets/NAME.ts"`,
          ).toBeDefined();
          continue;
        }
        expect(existsSync(join(ROOT, named)), named).toBe(true);
        expect(block.code.trimEnd(), `${file}: the block of ${named}`).toBe(
          readFileSync(join(ROOT, named), 'utf8').trimEnd(),
        );
        const listed = named.replace(/^examples\//, '');
        expect(RUN_EXAMPLES, `${named} is not in SELF_CHECKING`).toContain(`['${listed}', `);
      }
    },
  );

  it('the block run elsewhere is still on its page and still read by its test', () => {
    for (const entry of RUN_ELSEWHERE) {
      const found = codeBlocks(entry.page).filter(
        (block) => block.heading === entry.heading && block.code.startsWith(entry.firstLine),
      );
      expect(found, `${entry.page}: the block under "${entry.heading}"`).toHaveLength(1);
      const test = readFileSync(join(ROOT, entry.test), 'utf8');
      expect(test).toContain(`readmeBlock('${entry.heading}', 'ts')`);
    }
  });

  it('README: the snippets are examples/snippets files', () => {
    const blocks = codeBlocks('README.md');
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const block of blocks) expect(namedFile(block)).toMatch(/^examples\/snippets\/\S+\.ts$/);
  });

  it('docs: every page has a table of contents', () => {
    for (const file of DOCS.filter((name) => name.startsWith('docs'))) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(text, file).toMatch(/^Contents:\n\n- \[/m);
    }
  });
});
