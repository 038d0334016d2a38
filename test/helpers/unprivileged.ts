import { execFileSync, spawnSync } from 'node:child_process';

/** The account the unprivileged variants of the confinement tests run as. */
export const UNPRIVILEGED_USER = 'agentsuser';

/** An unprivileged account to switch to, and the argv prefix that runs a command as it. */
export interface UnprivilegedUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
  /** `setpriv --reuid UID --regid GID --init-groups --` (prepend to an argv). */
  prefix: string[];
}

/**
 * The unprivileged account when this process can switch to it (running as root, with setpriv),
 * creating it with `useradd -m` when absent (CI containers start without it). Undefined when not
 * root or when the account cannot be made: the caller says so in an assertion, never skips.
 */
export function unprivilegedUser(): UnprivilegedUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status !== 0) return undefined;
  const lookup = () => spawnSync('id', ['-u', UNPRIVILEGED_USER], { encoding: 'utf8' });
  if (lookup().status !== 0) spawnSync('useradd', ['-m', UNPRIVILEGED_USER], { stdio: 'ignore' });
  if (lookup().status !== 0) return undefined;
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, UNPRIVILEGED_USER], { encoding: 'utf8' }).trim());
  const uid = id('-u');
  const gid = id('-g');
  const home = execFileSync('getent', ['passwd', UNPRIVILEGED_USER], { encoding: 'utf8' })
    .trim()
    .split(':')[5]!;
  return {
    name: UNPRIVILEGED_USER,
    uid,
    gid,
    home,
    prefix: ['setpriv', '--reuid', String(uid), '--regid', String(gid), '--init-groups', '--'],
  };
}

/**
 * A bubblewrap argument list without what issue 35 added (user and IPC namespaces, dropped
 * capabilities, the seccomp filter): the command line servers got before, for preconditions.
 */
export function withoutPrivilegeDrop(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') return [...out, ...args.slice(index)];
    if (arg === '--unshare-user' || arg === '--unshare-ipc') continue;
    if (arg === '--cap-drop' || arg === '--seccomp') {
      index++;
      continue;
    }
    out.push(arg);
  }
  return out;
}
