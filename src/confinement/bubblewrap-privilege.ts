import { seccompFilterFile } from './seccomp-file.js';

/**
 * What takes every privilege away from a confined server, whoever runs the CLI (root in a
 * container or CI too): a user namespace of its own with no capability left in it, its own IPC
 * (SysV queues, semaphores, shared memory) and PID namespaces. bubblewrap sets no_new_privs
 * itself, so a setuid program inside gains nothing. Without `--unshare-user` a root CLI's server
 * would keep the full capability set and could unmount the covering mounts.
 */
export const PRIVILEGE_ARGUMENTS: readonly string[] = [
  '--unshare-user',
  '--cap-drop',
  'ALL',
  '--unshare-ipc',
  '--unshare-pid',
];

/** The descriptor bubblewrap reads the seccomp filter from (`--seccomp 3`). */
export const SECCOMP_FD = 3;

/** The bubblewrap arguments that install the filter (after {@link PRIVILEGE_ARGUMENTS}). */
export const SECCOMP_ARGUMENTS: readonly string[] = ['--seccomp', String(SECCOMP_FD)];

/** Runs the command in its first argument with the filter file open on fd 3 (no interpolation). */
const SHELL = '/bin/sh';
const OPEN_FILTER_AND_EXEC = `exec "$@" ${SECCOMP_FD}<"$0"`;

/**
 * The command line that starts bubblewrap with the seccomp filter on fd 3: `/bin/sh -c 'exec
 * "$@" 3<"$0"' FILTER BWRAP ARGS...`. The shell only opens the file and replaces itself with
 * bubblewrap; every path and argument travels as its own argv entry, never inside the script.
 */
export function launchWithSeccomp(
  bwrapPath: string,
  args: readonly string[],
): { command: string; args: string[] } {
  return {
    command: SHELL,
    args: ['-c', OPEN_FILTER_AND_EXEC, seccompFilterFile(), bwrapPath, ...args],
  };
}
