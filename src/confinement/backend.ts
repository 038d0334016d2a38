/**
 * The seam of OS confinement: what a confined process may see and do, said as intent, and the
 * interface a backend (bubblewrap, Landlock, a container runtime, macOS Seatbelt) implements to
 * turn that intent into a command line. Imports no backend; `backends.ts` holds the table.
 */

/** How stdio servers are confined: `auto` where possible, `required` or refuse, `off` never. */
export type ConfineMode = 'auto' | 'required' | 'off';

/**
 * A confined process's network: `none` (no route out, loopback at most), `proxy` (only the
 * library's proxy, reached through the Unix socket of {@link LaunchRequest.proxy}), `open`.
 */
export type NetworkAccess = 'none' | 'proxy' | 'open';

/** What a confined server may see and change. */
export interface ConfinementScope {
  /** The sandbox working tree: the only place a server may write (besides a private /tmp). */
  sandboxRoot: string;
  /**
   * The user's project folder. When the sandbox lies outside it and the backend can
   * (`guarantees.sandboxAtProjectPath`), the sandbox is seen at this path too, so an absolute
   * project path a tool was given lands in the sandbox; otherwise the project is read-only.
   */
  projectDir?: string;
  /**
   * Folders hidden from servers: the workspace, the state folder, the home folder. A hidden
   * folder may contain the sandbox, the project or a server's own files: those stay visible
   * (the most specific rule wins).
   */
  hidden?: readonly string[];
  /** Folders holding host sockets (`/run`, `$XDG_RUNTIME_DIR`, ...): private or hidden. */
  sockets?: readonly string[];
  /** Folders kept readable (read-only) even inside a hidden one (e.g. the npm cache). */
  readable?: readonly string[];
  /** The agents state folder: a server's command line may not name a path inside it. */
  stateDir?: string;
  /** Folders a server's `writable` exception may not overlap (the state folder, the workspace). */
  guarded?: readonly string[];
}

/** A server's explicit exceptions (its YAML `sandbox:`): absolute paths, `~/` for the home. */
export interface ConfinementExceptions {
  writable?: readonly string[];
  readOnly?: readonly string[];
}

/** One server start, as intent: each backend translates it into its own command line. */
export interface LaunchRequest {
  scope: ConfinementScope;
  /** The server's own command line (its install folders stay readable). */
  command: string;
  args: readonly string[];
  /** What really runs when something goes in front of the server (the proxy's forwarder). */
  entry?: { command: string; args: readonly string[] };
  /** The server's working folder (default: the sandbox). */
  cwd: string | undefined;
  network: NetworkAccess;
  /**
   * With `proxy`: the host folder holding the proxy's socket, and the folder the process
   * expects it at (the forwarder in the command line connects there).
   */
  proxy?: { folder: string; at: string };
  /** Variables set inside (proxy addresses, the npm cache). */
  env?: Readonly<Record<string, string>>;
  /** Folders the server may write besides the sandbox (its private npm cache). */
  writable?: readonly string[];
  /** The server's own `sandbox:` exceptions. */
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

/** What probing a confinement backend found: its executable, or why it cannot confine here. */
export type ConfinementProbe =
  { available: true; path: string } | { available: false; reason: string; fix?: string };

/** One `agents doctor` line about a confinement backend. */
export interface ConfinementCheck {
  name: string;
  /** `warn`: servers still run, unconfined. */
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  /** What to do about it (absent when `ok`). */
  fix?: string;
}

/**
 * What a backend holds to, whoever runs the CLI (root included): the confinement contract
 * (`/testing`) checks each `true` and, for each `false`, that the gap is real (so a declared
 * level is never wrong in either direction). Reading and writing outside the scope are refused
 * by every backend; these are the parts that differ.
 */
export interface ConfinementGuarantees {
  /** The network intents it honours; a request for another makes it unavailable. */
  readonly network: readonly NetworkAccess[];
  /** `none` cuts every route out (UDP, pathname and abstract Unix sockets too), not only TCP. */
  readonly networkNoneIsTotal: boolean;
  /** Host processes cannot be signalled or traced (own pid namespace, or Landlock scoping). */
  readonly processesIsolated: boolean;
  /** No pathname Unix socket of the host socket folders can be connected to. */
  readonly hostSocketsUnreachable: boolean;
  /** Hidden folders read as empty (true) rather than refusing access (false). */
  readonly hiddenReadsEmpty: boolean;
  /** The sandbox is seen at the project's path too (a mount); false: the project is read-only. */
  readonly sandboxAtProjectPath: boolean;
  /** Every capability dropped, `no_new_privs` set and the system call filter on. */
  readonly privilegesDropped: boolean;
  /** `/tmp` is private to the server (false: the server gets its own folder as `TMPDIR`). */
  readonly privateTmp: boolean;
}

/**
 * One way to confine a server process: a file of its own under `src/confinement/` plus an entry
 * in `confinementBackends`. Its settings (`sandbox.confinement` in an actor's config) are
 * validated by its schema in `settings.ts`; capabilities beyond the launch are optional methods.
 */
export interface ConfinementBackend<S extends { type: string } = { type: string }> {
  readonly type: S['type'];
  /** The platforms it runs on (`process.platform` values): the one place that says so. */
  readonly platforms: readonly NodeJS.Platform[];
  /** What to run to install it, named in messages (absent: nothing to install). */
  readonly installHint?: string;
  readonly guarantees: ConfinementGuarantees;
  /**
   * Chosen only when `sandbox.confinement` names it, never by `auto`/`required` on their own:
   * set when it holds less than the backends before it, so `required` is never met by less.
   */
  readonly onlyWhenNamed?: boolean;
  /** Whether it works here for `network` (cached by the backend; may spawn once). */
  probe(settings: S, network: NetworkAccess): ConfinementProbe;
  /** The command line that runs `request` confined (`path`: what `probe` found). */
  launch(path: string, request: LaunchRequest): WrappedCommand;
  /** The folders a confined server cannot see (for `agents doctor` and docs). */
  hides?(scope: ConfinementScope): string[];
  /** Its own `agents doctor` lines (install, kernel settings), so the doctor names no backend. */
  doctorChecks?(settings: S): ConfinementCheck[];
}

/**
 * The network plan of one stdio server (see `servers/network/server-network.ts`): what its
 * launch needs, network-wise. Neutral, so confinement never imports the proxy.
 */
export interface NetworkLaunch {
  network: NetworkAccess;
  /** With `proxy`: the host folder of the proxy socket and where the forwarder expects it. */
  proxy?: { folder: string; at: string };
  /** Variables to set inside (where the proxy is). */
  env: Record<string, string>;
  /** The command line inside (the forwarder in front of the server, or unchanged). */
  command: string;
  args: string[];
}

/** Decides each server's network at launch; the servers layer implements it. */
export interface NetworkPlanner {
  /**
   * @throws AgentsError `CONFINEMENT_UNAVAILABLE` when the server has host lists and cannot be
   *   confined, or its proxy is not running: it must not start with open network.
   */
  launch(
    serverName: string | undefined,
    confined: boolean,
    command: string,
    args: readonly string[],
    /** Why it is not confined, for the refusal. */
    unconfinedBecause?: string,
  ): NetworkLaunch;
}
