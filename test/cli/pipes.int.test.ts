import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TSX_LOADER } from '../fixtures/fixture-process.js';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');

describe('agents in a pipeline', () => {
  it('ends quietly with 0 when the reader of stdout goes away (`agents ... | head -3`)', async () => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, MAIN, '--help'], {
      cwd: tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Close the reading end before the binary has started: its first write meets a closed pipe.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(stderr).not.toContain('interrupted');
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
