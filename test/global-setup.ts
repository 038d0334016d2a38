import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Points the per-user state folder (where sandboxes live) at a temp folder for the whole run,
 * so no test writes into the real `~/.local/state/agents`. Set before the workers start, so
 * they and every process they spawn (the CLI, examples) inherit it. Removed at the end.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'agents-test-state-'));
  process.env['AGENTS_STATE_DIR'] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
