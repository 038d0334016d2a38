import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCheckpointer } from '../../src/checkpoint/backends.js';
import { TSX_LOADER } from '../fixtures/fixture-process.js';

const HIDE_PACKAGES = pathToFileURL(
  join(import.meta.dirname, '..', 'fixtures', 'hide-packages.mjs'),
).href;
const CHECKPOINTER = pathToFileURL(
  join(import.meta.dirname, '..', '..', 'src', 'checkpoint', 'backends.ts'),
).href;

describe('checkpointer open errors say which file or package and what to do', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-cp-errors-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a corrupt checkpoints.sqlite is named, with how to move it aside', async () => {
    const file = join(dir, 'checkpoints.sqlite');
    await writeFile(file, 'this is not sqlite, it was overwritten by something else\n'.repeat(200));
    const error = await createCheckpointer({ type: 'sqlite', path: file }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', details: { path: file } });
    const message = (error as Error).message;
    expect(message).toContain(`The checkpoint file "${file}" cannot be read as SQLite`);
    expect(message).toContain('file is not a database');
    expect(message).toContain(`mv "${file}" "${file}.broken"`);
  });

  it('postgres without its package names the package to install, not the URL', async () => {
    const script = `
      const { createCheckpointer } = await import(${JSON.stringify(CHECKPOINTER)});
      try {
        await createCheckpointer({ type: 'postgres', url: 'postgres://u:secret@127.0.0.1:1/db' });
      } catch (error) {
        process.stdout.write(JSON.stringify({ code: error.code, message: error.message }));
      }`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', TSX_LOADER, '--import', HIDE_PACKAGES, '--input-type=module', '-e', script],
      { env: { ...process.env, AGENTS_HIDE_PACKAGES: '@langchain/langgraph-checkpoint-postgres' } },
    );
    const result = JSON.parse(stdout) as { code: string; message: string };
    expect(result.code).toBe('CONFIG_INVALID');
    expect(result.message).toContain(
      'needs the package @langchain/langgraph-checkpoint-postgres, which is not installed',
    );
    expect(result.message).toContain('npm install @langchain/langgraph-checkpoint-postgres pg');
    expect(result.message).not.toContain('127.0.0.1');
  });
});
