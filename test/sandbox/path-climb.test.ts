/**
 * Issue 35, item 8: a relative path that climbs out of the project and back in
 * (`./../../repo/src/main.py`) is refused: whether it was accepted told a model the names of the
 * folders above the project. Paths that go down and up inside stay accepted.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { createPathMap } from '../../src/sandbox/path-map.js';

let scratch: string;
let root: string;
beforeAll(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'path-climb-')));
  root = join(scratch, 'repo');
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(root, 'src', 'main.py'), 'print(1)\n');
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

it('refuses ./../../repo/src/main.py and its spellings; accepts src/../src/main.py', () => {
  const map = createPathMap(root);
  const name = basename(root);
  for (const path of [
    `./../${name}/src/main.py`,
    `../${name}/src/main.py`,
    `src/../../${name}/src/main.py`,
  ]) {
    let error: unknown;
    try {
      map.toSandbox(path);
    } catch (caught) {
      error = caught;
    }
    expect(AgentsError.hasCode(error, 'PATH_OUTSIDE_SANDBOX'), path).toBe(true);
    expect((error as Error).message).toContain('climbs out of the project');
  }
  expect(map.toSandbox('src/../src/main.py')).toBe(join(root, 'src', 'main.py'));
  expect(map.toSandbox('./src/./main.py')).toBe(join(root, 'src', 'main.py'));
});
