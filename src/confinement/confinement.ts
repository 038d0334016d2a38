import { dirname } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type {
  ConfineMode,
  ConfinementExceptions,
  ConfinementScope,
  NetworkAccess,
  NetworkPlanner,
  WrappedCommand,
} from './backend.js';
import { findConfinementBackend } from './backends.js';
import { beginNpmCacheStart, npmCacheEnvironment, privateNpmCache } from './npm-cache.js';

/** Confinement settings (the actor's `sandbox.confine`, `sandbox.confinement`, network). */
export interface ConfinementSettings {
  mode: ConfineMode;
  /**
   * The most any server of the activation needs: `open` (default), `none`, or `proxy` (some
   * server has host lists). A backend that cannot give it is not chosen.
   */
  network?: NetworkAccess;
  /** The backend and its settings (`{ type: 'bubblewrap', path }`); absent: the first that works. */
  backend?: { type: string; [setting: string]: unknown } | undefined;
  /** Per-server network (host lists, the proxy); without it every server gets `network`. */
  networkHook?: NetworkPlanner;
}

/** The server a command line belongs to: its name (network rules) and its exceptions. */
export interface WrapServer {
  name?: string | undefined;
  exceptions?: ConfinementExceptions | undefined;
}

/**
 * The confinement chosen for one actor activation. `wrap()` is pure and cheap (argv building
 * only); the probing happened when it was resolved.
 */
export interface Confinement {
  /** The confinement backend's type (`bubblewrap`, ...) when servers run confined, else `none`. */
  readonly kind: string;
  /** Why servers are not confined (absent when they are, or when the mode is `off`). */
  readonly reason?: string;
  /** Whether confined servers have open network access. */
  readonly network: boolean;
  /** The per-server network hook, when the actor has one (remote servers use it too). */
  readonly networkHook?: NetworkPlanner;
  /**
   * The command line that runs `command args` confined (or unchanged for `none`), in `cwd`,
   * with the server's own exceptions and network rules.
   *
   * @throws AgentsError `CONFINEMENT_UNAVAILABLE` when the server has network host lists and
   *   cannot be confined or its proxy is not running, or the backend cannot give its network.
   */
  wrap(
    command: string,
    args: readonly string[],
    cwd: string | undefined,
    server?: WrapServer,
  ): WrappedCommand;
}

const unchanged = (command: string, args: readonly string[]): WrappedCommand => ({
  command,
  args: [...args],
});

/**
 * Decides how this activation's stdio servers run. `off`: unconfined. `auto`: the backend
 * `settings.backend` names, else the first that works here (see `confinementBackends`), else
 * unconfined with `reason` set (the caller says so once). `required`: a backend or an error.
 *
 * @throws AgentsError `CONFINEMENT_UNAVAILABLE` in `required` mode when no backend can run,
 *   naming why and the fix.
 */
export function resolveConfinement(
  settings: ConfinementSettings,
  scope: ConfinementScope,
): Confinement {
  const network = settings.network ?? 'open';
  const hook = settings.networkHook;
  const withHook = hook === undefined ? {} : { networkHook: hook };
  // Unconfined: a server with host lists refuses to start (the hook throws); others run as is.
  const unconfined = (reason: string | undefined): Confinement => ({
    kind: 'none',
    network: network === 'open',
    ...(reason === undefined ? {} : { reason }),
    ...withHook,
    wrap: (command, args, _cwd, server) => {
      hook?.launch(server?.name, false, command, args, reason ?? 'sandbox.confine is "off"');
      return unchanged(command, args);
    },
  });
  if (settings.mode === 'off') return unconfined(undefined);
  const found = findConfinementBackend({ network, backend: settings.backend });
  if (!found.available) {
    if (settings.mode === 'required') {
      throw new AgentsError(
        AgentsErrorCode.ConfinementUnavailable,
        `Servers were not started: sandbox.confine is "required" but ${found.reason}. ` +
          `${found.fix === undefined ? 'No OS confinement exists here yet' : `Install it (\`${found.fix}\`)`}, or set sandbox.confine to "auto" to run servers unconfined where confinement is unavailable.`,
        {
          details: { reason: found.reason, ...(found.fix === undefined ? {} : { fix: found.fix }) },
        },
      );
    }
    return unconfined(found.reason);
  }
  const { backend, path } = found;
  return {
    kind: backend.type,
    network: network === 'open',
    ...withHook,
    wrap: (command, args, cwd, server) => {
      // The network hook decides per server: cut, open, or only through the proxy.
      const net = hook?.launch(server?.name, true, command, args);
      const access = net?.network ?? network;
      if (!backend.guarantees.network.includes(access)) {
        throw new AgentsError(
          AgentsErrorCode.ConfinementUnavailable,
          `Server "${server?.name ?? 'server'}" was not started: its network is "${access}", which the ${backend.type} confinement cannot give (it offers ${backend.guarantees.network.join(', ')}). Choose another backend in sandbox.confinement or change the server's network.`,
          { details: { serverName: server?.name ?? 'server', reason: 'network-unsupported' } },
        );
      }
      const npmCache = privateNpmCache(command, server?.name);
      const env = {
        ...net?.env,
        ...(npmCache === undefined ? {} : npmCacheEnvironment(npmCache)),
      };
      const wrapped = backend.launch(path, {
        scope,
        command,
        args,
        cwd,
        network: access,
        ...(net?.proxy === undefined ? {} : { proxy: net.proxy }),
        ...(net === undefined ? {} : { entry: { command: net.command, args: net.args } }),
        env,
        ...(npmCache === undefined ? {} : { writable: [npmCache] }),
        exceptions: server?.exceptions,
      });
      // A half install left by a start that was cut short is removed before npx sees it.
      return npmCache === undefined
        ? wrapped
        : { ...wrapped, settle: beginNpmCacheStart(npmCache, server?.name) };
    },
  };
}

/** How {@link confinementRefusalNote} starts (the CLI prints the note on a line of its own). */
export const CONFINEMENT_REFUSAL_PREFIX = '[agents] OS confinement refused';

const READ_ONLY_FS = /\bEROFS\b|read-only file system/i;

/**
 * When a confined server's error text says a write hit a read-only file system (EROFS), the note
 * that names the cause and the way out: confinement refused a write outside the sandbox; a
 * server that keeps its own data elsewhere gets an explicit `sandbox.writable` exception. The
 * path in the error (`open '/x/y'`) is named when there is one. Undefined for other errors.
 */
export function confinementRefusalNote(serverName: string, text: string): string | undefined {
  if (!READ_ONLY_FS.test(text)) return undefined;
  const path = /['"`](\/[^'"`\n]+)['"`]/.exec(text)?.[1];
  const folder = path === undefined ? '/path/to/its/data' : dirname(path);
  return (
    `${CONFINEMENT_REFUSAL_PREFIX} a write outside the sandbox${path === undefined ? '' : ` (${path})`}: ` +
    `server "${serverName}" may write only in the sandbox and a private /tmp. If it must keep its ` +
    `own data there, allow that folder in .agents/servers/${serverName}.yaml with ` +
    `\`sandbox: { writable: [${folder}] }\` (\`agents doctor\` lists these exceptions); ` +
    'otherwise write inside the project.'
  );
}

// Reasons already reported in this process: `auto` says once that it cannot confine.
const reported = new Set<string>();

/**
 * Reports, once per process and reason, that servers run unconfined. Returns true when this
 * call reported it.
 */
export function reportUnconfinedOnce(
  confinement: Confinement,
  report: (message: string) => void,
): boolean {
  if (confinement.kind !== 'none' || confinement.reason === undefined) return false;
  if (reported.has(confinement.reason)) return false;
  reported.add(confinement.reason);
  report(
    `Stdio servers run WITHOUT OS confinement: ${confinement.reason}. Only path rewriting and ` +
      'the sandbox repository protect your files; set sandbox.confine: required to refuse instead.',
  );
  return true;
}
