/**
 * Counts child processes started through `node:child_process` (spawn, execFile, exec and their
 * sync forms) while installed, by command. Used to prove a read-only call does no git work.
 * ESM named imports of builtins are kept in sync with the patched CommonJS object through
 * `syncBuiltinESMExports()`, so modules that did `import { execFile } from 'node:child_process'`
 * are counted too.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);

/** A running counter; `uninstall()` restores the original functions. */
export interface SpawnCounter {
  /** How many processes were started whose command (file name) matches. */
  count(command?: RegExp): number;
  reset(): void;
  uninstall(): void;
}

const PATCHED = [
  'spawn',
  'execFile',
  'exec',
  'spawnSync',
  'execFileSync',
  'execSync',
  'fork',
] as const;

/** Installs the counter. */
export function installSpawnCounter(): SpawnCounter {
  const childProcess = require('node:child_process') as Record<string, unknown>;
  const originals = new Map<string, unknown>();
  const commands: string[] = [];
  for (const name of PATCHED) {
    const original = childProcess[name];
    if (typeof original !== 'function') continue;
    originals.set(name, original);
    const fn = original as (...args: unknown[]) => unknown;
    childProcess[name] = function counted(this: unknown, ...args: unknown[]): unknown {
      commands.push(typeof args[0] === 'string' ? args[0] : String(args[0]));
      return fn.apply(this, args);
    };
  }
  syncBuiltinESMExports();
  return {
    count: (command) =>
      command === undefined
        ? commands.length
        : commands.filter((each) => command.test(each)).length,
    reset: () => void commands.splice(0),
    uninstall: () => {
      for (const [name, original] of originals) childProcess[name] = original;
      syncBuiltinESMExports();
    },
  };
}
