import { dirname } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { findConfinementBackend } from './confinement-backends.js';
import type { NetworkLaunch, ServerNetworkHook } from './network/server-network.js';
import { beginNpmCacheStart, privateNpmCache } from './npm-cache.js';

/**
 * How stdio servers are confined: `auto` confines where the OS allows it and says once when it
 * cannot; `required` refuses to start a server unconfined; `off` never confines.
 */
export type ConfineMode = 'auto' | 'required' | 'off';

/** Confinement settings (the actor's `sandbox.confine` / `sandbox.network`). */
export interface ConfinementSettings {
  mode: ConfineMode;
  /** Network access for confined servers. Default true; false gives them loopback only. */
  network?: boolean;
  /** The bubblewrap executable: a path, or a name looked up on PATH. Default `bwrap`. */
  bwrapPath?: string;
  /** Per-server network (host lists, the proxy); without it every server gets `network`. */
  networkHook?: ServerNetworkHook;
}

/** What a confined server may see and change. */
export interface ConfinementScope {
  /** The sandbox working tree: the only place a server may write (besides a private /tmp). */
  sandboxRoot: string;
  /**
   * The user's project folder. When the sandbox lies outside it, the sandbox is mounted at
   * this path too, so an absolute project path a tool was given lands in the sandbox.
   */
  projectDir?: string;
  /**
   * Folders hidden from servers (an empty tmpfs over each): the workspace, the state folder,
   * the home folder. A hidden folder may contain the sandbox, the project or a server's own
   * files: those are mounted back over it (the most specific mount wins).
   */
  hidden?: readonly string[];
  /**
   * Folders holding host sockets (`/run`, `$XDG_RUNTIME_DIR`, ...; see `hostSocketFolders`):
   * each a private empty tmpfs, writable like `/tmp`, unless a server's rule names a path inside.
   */
  sockets?: readonly string[];
  /** Folders kept readable (read-only) even inside a hidden one (e.g. the npm cache). */
  readable?: readonly string[];
  /** The agents state folder: a server's command line may not name a path inside it. */
  stateDir?: string;
  /** Folders a server's `writable` exception may not overlap (the state folder, the workspace). */
  guarded?: readonly string[];
}

/** A server's explicit exceptions (its YAML `sandbox:`): absolute paths. */
export interface ConfinementExceptions {
  writable?: readonly string[];
  readOnly?: readonly string[];
}

/** The server a command line belongs to: its name (network rules) and its exceptions. */
export interface WrapServer {
  name?: string | undefined;
  exceptions?: ConfinementExceptions | undefined;
}

/** A command line to spawn instead of the server's own. */
export interface WrappedCommand {
  command: string;
  args: string[];
  /**
   * Set for an `npx`/`npm` server with a private npm cache: call with `true` once the server
   * answered `initialize`, `false` when its start failed (see `beginNpmCacheStart`).
   */
  settle?: (started: boolean) => void;
}

/**
 * The confinement chosen for one actor activation. `wrap()` is pure and cheap (argv building
 * only); the probing happened when it was resolved.
 */
export interface Confinement {
  /** The confinement backend's name (`bubblewrap`, ...) when servers run confined, else `none`. */
  readonly kind: string;
  /** Why servers are not confined (absent when they are, or when the mode is `off`). */
  readonly reason?: string;
  /** Whether confined servers have network access. */
  readonly network: boolean;
  /** The per-server network hook, when the actor has one (remote servers use it too). */
  readonly networkHook?: ServerNetworkHook;
  /**
   * The command line that runs `command args` confined (or unchanged for `none`), in `cwd`,
   * with the server's own exceptions and network rules.
   *
   * @throws AgentsError `CONFINEMENT_UNAVAILABLE` when the server has network host lists and
   *   cannot be confined or its proxy is not running.
   */
  wrap(
    command: string,
    args: readonly string[],
    cwd: string | undefined,
    server?: WrapServer,
  ): WrappedCommand;
}

/** What probing a confinement backend found: its executable, or why it cannot confine here. */
export type ConfinementProbe =
  { available: true; path: string } | { available: false; reason: string; fix?: string };

/** What a backend builds one server's confined command line from. */
export interface ConfinementWrapInput {
  scope: ConfinementScope;
  network: boolean;
  command: string;
  args: readonly string[];
  /** The server's working folder (default: the sandbox). */
  cwd: string | undefined;
  exceptions?: ConfinementExceptions | undefined;
  /**
   * The network hook's launch: folders to bind writable and variables to set (the proxy
   * socket), and the command line that really runs (the forwarder in front of the server).
   */
  launch?: NetworkLaunch;
  /** A private writable npm cache for an `npx`/`npm` server (see `privateNpmCache`). */
  npmCache?: string | undefined;
}

/**
 * One way to confine a server process (bubblewrap on Linux; macOS Seatbelt or a container
 * runtime would be others). Kept in `CONFINEMENT_BACKENDS`: a new one is a module implementing
 * this and an entry there. Which platforms it runs on is said here, once.
 */
export interface ConfinementBackend {
  readonly name: string;
  /** The platforms it can run on (`process.platform` values): the one place that says so. */
  readonly platforms: readonly NodeJS.Platform[] | 'all';
  /** False only for `none`, which runs servers as they are. */
  readonly confines: boolean;
  /** What to run to install it, named in messages (absent: nothing to install). */
  readonly installHint?: string;
  /** Whether it works here, with or without network (cached by the backend; may spawn once). */
  probe(settings: { network: boolean; bwrapPath?: string | undefined }): ConfinementProbe;
  /** The command line that runs `input.command` confined to `input.scope`. */
  wrap(path: string, input: ConfinementWrapInput): WrappedCommand;
  /** The folders a confined server cannot see (for `agents doctor` and docs). */
  hides(scope: ConfinementScope): string[];
  /**
   * What `agents doctor` prints about this backend on a platform it runs on: whether it works
   * here and, when not, the fix (install it, the kernel setting...). Its own checks, so the
   * doctor knows no backend by name. Empty for `none`.
   */
  doctorChecks(settings: { bwrapPath?: string | undefined }): ConfinementCheck[];
}

/** One `agents doctor` line about a confinement backend (the doctor's check shape). */
export interface ConfinementCheck {
  name: string;
  /** `warn`: servers still run, unconfined. */
  status: 'ok' | 'warn' | 'fail';
  /** What was found. */
  detail: string;
  /** What to do about it (absent when `ok`). */
  fix?: string;
}

const NONE_OFF: Confinement = {
  kind: 'none',
  network: true,
  wrap: (command, args) => ({ command, args: [...args] }),
};

/**
 * Decides how this activation's stdio servers run. `off`: unconfined. `auto`: the first
 * confinement backend that works here (see `CONFINEMENT_BACKENDS`), else unconfined with
 * `reason` set (the caller says so once). `required`: a backend or an error.
 *
 * @throws AgentsError `CONFINEMENT_UNAVAILABLE` in `required` mode when no backend can run,
 *   naming why and the fix.
 */
export function resolveConfinement(
  settings: ConfinementSettings,
  scope: ConfinementScope,
): Confinement {
  const network = settings.network ?? true;
  const hook = settings.networkHook;
  // Unconfined: a server with host lists refuses to start (the hook throws); others run as is.
  const unconfined = (base: Confinement): Confinement =>
    hook === undefined
      ? base
      : {
          ...base,
          networkHook: hook,
          wrap: (command, args, _cwd, server) => {
            hook.launch(
              server?.name,
              false,
              command,
              args,
              base.reason ?? 'sandbox.confine is "off"',
            );
            return { command, args: [...args] };
          },
        };
  if (settings.mode === 'off') return unconfined({ ...NONE_OFF, network });
  const found = findConfinementBackend({ network, bwrapPath: settings.bwrapPath });
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
    return unconfined({ ...NONE_OFF, network, reason: found.reason });
  }
  const { backend, path } = found;
  return {
    kind: backend.name,
    network,
    ...(hook === undefined ? {} : { networkHook: hook }),
    wrap: (command, args, cwd, server) => {
      // The network hook decides per server: cut, open, or only through the proxy.
      const net = hook?.launch(server?.name, true, command, args);
      const npmCache = privateNpmCache(command, server?.name);
      const wrapped = backend.wrap(path, {
        scope,
        network: net === undefined ? network : !net.unshareNet,
        command,
        args,
        cwd,
        exceptions: server?.exceptions,
        ...(net === undefined ? {} : { launch: net }),
        npmCache,
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
