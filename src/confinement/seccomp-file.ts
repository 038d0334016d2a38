import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSeccompFilter } from './seccomp-filter.js';

let compiled: { filter: Buffer; name: string } | undefined;
/** The filter files this process wrote, by cache folder (a test may switch the folder). */
const filterFiles = new Map<string, string>();

/**
 * The compiled filter as a file the host only can write: in the user's cache folder
 * (`$XDG_CACHE_HOME/agents/confinement`, else `~/.cache/agents/confinement`; `$HOME` is hidden
 * from every confined server, and the state folder stays as the user left it), named by its
 * content's hash, checked byte for byte once per process and folder and rewritten (atomically)
 * when it differs or is gone. A cache folder that cannot be written falls back to a private
 * folder under the temp folder, removed at exit.
 */
export function seccompFilterFile(): string {
  compiled ??= (() => {
    const filter = compileSeccompFilter();
    const hash = createHash('sha256').update(filter).digest('hex').slice(0, 16);
    return { filter, name: `seccomp-${hash}.bpf` };
  })();
  const { filter, name } = compiled;
  const cacheDir = filterCacheDir();
  const known = filterFiles.get(cacheDir);
  // One stat per server start: a cache folder removed under a long-lived process would
  // otherwise leave the shell nothing to open (exit 2 before bubblewrap runs).
  if (known !== undefined && existsSync(known)) return known;
  const write = (dir: string): string => {
    const path = join(dir, name);
    let current: Buffer | undefined;
    try {
      current = readFileSync(path);
    } catch {
      // absent: written below
    }
    if (current === undefined || !current.equals(filter)) {
      const partial = `${path}.${process.pid}.tmp`;
      writeFileSync(partial, filter, { mode: 0o600 });
      renameSync(partial, path);
    }
    return path;
  };
  let path: string;
  try {
    const dir = cacheDir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    path = write(dir);
  } catch {
    const dir = mkdtempSync(join(tmpdir(), 'agents-seccomp-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    path = write(dir);
  }
  filterFiles.set(cacheDir, path);
  return path;
}

/** Where the compiled filter is kept: the user's cache folder, as the private npm caches are. */
function filterCacheDir(): string {
  const home = process.env['HOME'] || homedir();
  return join(process.env['XDG_CACHE_HOME'] || join(home, '.cache'), 'agents', 'confinement');
}
