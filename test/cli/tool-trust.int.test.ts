import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAULT_SERVER } from '../servers/fixture.js';
import { agents } from './helpers.js';

interface ShownTool {
  capabilities: { readOnly: { value: boolean; source: string } };
  warnings?: string[];
}

describe('agents tool trust / server add --trust-annotations', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-trust-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const show = async (id: string) =>
    JSON.parse((await agents(dir, 'tool', 'show', id, '--json')).stdout) as ShownTool;

  it(
    "records the reviewed fingerprints; the annotations count until the tool's definition changes",
    { timeout: 60_000 },
    async () => {
      const add = await agents(
        dir,
        ...['server', 'add', 'faulty', '--', process.execPath, FAULT_SERVER, 'normal'],
      );
      expect(add.code).toBe(0);
      // `slow` says readOnlyHint: true, but the server is not trusted and the name has no read word.
      expect((await show('mcp:faulty/slow')).capabilities.readOnly.value).toBe(false);

      const trust = await agents(dir, 'tool', 'trust', 'faulty', '--tool', 'slow');
      expect(trust.code).toBe(0);
      expect(trust.stdout).toMatch(/slow +readOnlyHint=true/);
      const file = join(dir, '.agents', 'servers', 'faulty.yaml');
      const yaml = await readFile(file, 'utf8');
      expect(yaml).toMatch(/trustedTools:\n {2}slow: [0-9a-f]{64}\n/);
      expect((await show('mcp:faulty/slow')).capabilities.readOnly).toMatchObject({
        value: true,
        source: 'annotation',
      });
      // Only the reviewed tool is trusted.
      expect((await show('mcp:faulty/echo')).capabilities.readOnly.source).not.toBe('annotation');

      // A definition that differs from the reviewed one is untrusted again, with a warning.
      await writeFile(file, yaml.replace(/slow: [0-9a-f]{64}/, `slow: ${'f'.repeat(64)}`));
      const changed = await show('mcp:faulty/slow');
      expect(changed.capabilities.readOnly.value).toBe(false);
      expect(changed.warnings?.join('\n')).toContain(
        'its definition changed since its annotations were reviewed',
      );
      expect(changed.warnings?.join('\n')).toContain('agents tool trust faulty --tool slow');

      const unknown = await agents(dir, 'tool', 'trust', 'faulty', '--tool', 'nope');
      expect(unknown.code).toBe(4);
      expect(unknown.stderr).toContain('Server "faulty" has no tool "nope"');
    },
  );

  it('server add --trust-annotations records every listed tool', { timeout: 60_000 }, async () => {
    const add = await agents(
      dir,
      ...['server', 'add', 'faulty', '--trust-annotations', '--'],
      ...[process.execPath, FAULT_SERVER, 'normal'],
    );
    expect(add.code).toBe(0);
    const yaml = await readFile(join(dir, '.agents', 'servers', 'faulty.yaml'), 'utf8');
    expect(yaml).toMatch(/ {2}slow: [0-9a-f]{64}/);
    expect(yaml).toMatch(/ {2}echo: [0-9a-f]{64}/);
    expect((await show('mcp:faulty/slow')).capabilities.readOnly.value).toBe(true);
  });
});
