/**
 * The README's snippets import only public names: every `import { ... } from
 * '@agents/langgraph-mcp[/subpath]'` in it names something that entry exports (the entry's
 * source module, as package.json "exports" maps it).
 */
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

interface Manifest {
  name: string;
  exports: Record<string, string | { default: string }>;
}

/** `./dist/serving/index.js` → `src/serving/index.ts`. */
function sourceOf(target: string): string {
  return target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts');
}

/** The names an entry module exports: its `export { a, b as c }` lists and declarations. */
function exportedNames(source: string): Set<string> {
  const names = new Set<string>();
  for (const [, list] of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of list!.split(',')) {
      const name = item
        .trim()
        .split(/\s+as\s+/)
        .at(-1)!
        .trim();
      if (name !== '') names.add(name);
    }
  }
  for (const [, name] of source.matchAll(
    /export\s+(?:async\s+)?(?:function|const|class|interface|type|enum)\s+([A-Za-z0-9_$]+)/g,
  ))
    names.add(name!);
  return names;
}

describe('README imports', () => {
  it('names only what the package entries export', async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Manifest;
    // The README and the docs pages its text moved to.
    const pages = [
      'README.md',
      ...readdirSync(join(ROOT, 'docs')).map((file) => join('docs', file)),
    ];
    const readme = (
      await Promise.all(pages.map((page) => readFile(join(ROOT, page), 'utf8')))
    ).join('\n');
    const pattern = new RegExp(
      `import\\s+(type\\s+)?\\{([^}]*)\\}\\s+from\\s+'(${manifest.name.replace('/', '\\/')}[^']*)'`,
      'g',
    );
    const imports = [...readme.matchAll(pattern)];
    expect(imports.length).toBeGreaterThan(3);
    const missing: string[] = [];
    for (const [, typeOnly, names, specifier] of imports) {
      const subpath = `.${specifier!.slice(manifest.name.length)}`;
      const target = manifest.exports[subpath];
      expect(target, `${specifier} is not in package.json "exports"`).toBeDefined();
      const file = sourceOf(typeof target === 'string' ? target : target!.default);
      const exported = exportedNames(await readFile(join(ROOT, file), 'utf8'));
      for (const raw of names!.split(',')) {
        const name = raw.replace(/^\s*type\s+/, '').trim();
        if (name !== '' && !exported.has(name)) missing.push(`${name} from ${specifier}`);
      }
      expect(typeOnly === undefined || typeOnly.trim() === 'type').toBe(true);
    }
    expect(missing).toEqual([]);
  });
});
