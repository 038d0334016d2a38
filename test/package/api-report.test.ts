/**
 * The API report (issue 25): `api/*.md` lists every package entry's exported names. A change to
 * an entry that is not also a change to its report fails here, so the public surface is reviewed
 * whenever it changes (regenerate with `node scripts/api-report.mjs` and read the diff).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

describe('api/*.md', () => {
  it('matches the exports of every package entry', () => {
    const result = spawnSync(process.execPath, ['scripts/api-report.mjs', '--check'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  }, 120_000);

  it('keeps the root short: the names a newcomer needs, internals on named entries', () => {
    const root_ = readFileSync(join(root, 'api', 'index.md'), 'utf8');
    for (const name of [
      'createActor',
      'createMcpToolAdapter',
      'createToolRegistry',
      'AgentsError',
      'loadYamlFile',
    ])
      expect(root_).toContain(`\`${name}\``);
    for (const name of [
      'agentsStateDir',
      'threadSandboxDir',
      'undoStack',
      'isDeliverySandbox',
      'createMcpToolEntries',
    ])
      expect(root_).not.toContain(`\`${name}\``);
    expect(root_.split('\n').filter((line) => line.startsWith('- ')).length).toBeLessThanOrEqual(
      50,
    );
  });
});
