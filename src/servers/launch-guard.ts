import { basename } from 'node:path';
import type { StdioServerConfig } from '../config/server-schema.js';
import { AgentsErrorCode, ServerError } from '../errors.js';
import { formatCommandLine } from '../redact.js';

// Interpreters that run code given on the command line. We always spawn with an argument array,
// so `&&` or `|` in an argument stays literal; but `sh -c "..."` or `node -e "..."` hands a whole
// program to an interpreter, which is how launch-config injection works (security.md T17).
const SHELLS = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'fish',
  'cmd',
  'cmd.exe',
  'powershell',
  'pwsh',
]);
const SHELL_CODE_FLAGS = new Set(['-c', '/c', '/k', '-command', '-encodedcommand']);
const RUNTIMES = new Set(['node', 'nodejs', 'deno', 'bun', 'python', 'python3', 'perl', 'ruby']);
const RUNTIME_CODE_FLAGS = new Set(['-e', '--eval', '-p', '--print', '-c', '-r']);
// `npx -c "..."` / `npm exec -c` runs a shell string (GHSA-c9gw-hvqq-f33r).
const PACKAGE_RUNNERS = new Set(['npx', 'npm', 'pnpm', 'yarn', 'bunx']);
const PACKAGE_RUNNER_CODE_FLAGS = new Set(['-c', '--call']);

/**
 * Refuses stdio launch configs that hand a code string to an interpreter (`sh -c`, `node -e`,
 * `npx -c`, ...) unless the operator set `allowShell: true` on that server. Runs before spawn,
 * because the command runs before any handshake could reveal anything.
 *
 * @throws ServerError `SERVER_START_FAILED` (phase `spawn`) naming the server and the flag.
 */
export function assertSafeLaunch(config: StdioServerConfig & { name: string }): void {
  if (config.allowShell) return;
  const program = basename(config.command).toLowerCase();
  const args = (config.args ?? []).map((arg) => arg.toLowerCase());
  const flags = SHELLS.has(program)
    ? SHELL_CODE_FLAGS
    : RUNTIMES.has(program) || /^python3?\.\d+$/.test(program)
      ? RUNTIME_CODE_FLAGS
      : PACKAGE_RUNNERS.has(program)
        ? PACKAGE_RUNNER_CODE_FLAGS
        : undefined;
  if (flags === undefined) return;
  // Only the interpreter's own options count: those before the first positional argument (the
  // script). `node server.js -c x` passes `-c` to the server, not to node.
  const firstPositional = args.findIndex((arg) => !arg.startsWith('-') && !/^\/[a-z]$/.test(arg));
  const ownOptions = firstPositional === -1 ? args : args.slice(0, firstPositional);
  const flag = ownOptions.find(
    (arg) => flags.has(arg) || (arg.startsWith('--eval=') && flags.has('--eval')),
  );
  if (flag === undefined) return;
  const target = formatCommandLine(config.command, config.args ?? []);
  throw new ServerError(
    AgentsErrorCode.ServerStartFailed,
    `Server "${config.name}" was not started: its command runs a code string through ` +
      `"${program} ${flag}" (command: ${target}). Point "command" at the server executable with ` +
      `its arguments, or set "allowShell: true" on this server if you wrote this command yourself.`,
    { serverName: config.name, phase: 'spawn', target },
  );
}
