import { confinementScope } from '../servers/confinement-scope.js';
import type { NetworkSetting } from '../config/network-schema.js';
import type { DecisionOptions } from '../servers/network/proxy-decision.js';
import type { ServerNetworkHook } from '../servers/network/server-network.js';
import {
  reportUnconfinedOnce,
  resolveConfinement,
  type ConfineMode,
  type Confinement,
} from '../servers/confinement.js';

/** `createActor` confinement options; each wins over the actor config's `sandbox:` field. */
export interface ActorConfinementOptions {
  /** Wins over `sandbox.confine`. */
  mode?: ConfineMode;
  /** Wins over `sandbox.network`. */
  network?: NetworkSetting;
  /**
   * The proxy's name resolution (tests: `testHosts` maps names to loopback addresses, and the
   * address check is waived for those names only).
   */
  proxy?: DecisionOptions;
  /** The bubblewrap executable (path or name on PATH). Default `bwrap`. */
  bwrapPath?: string;
}

/** The confinement of one activation, as an actor reports it. */
export interface ActorConfinement {
  readonly kind: Confinement['kind'];
  /** Why servers are not confined, when `auto` could not confine them. */
  readonly reason?: string;
  readonly network: boolean;
}

/**
 * Resolves the OS confinement of an actor's stdio servers at activation: the sandbox (or, with
 * the sandbox off, the project) writable and mounted at the project's own path; the workspace,
 * the state folder and the home folder hidden (see `confinementScope`). Says once per process when `auto` cannot confine.
 *
 * @throws AgentsError `CONFINEMENT_UNAVAILABLE` when the mode is `required` and no
 *   confinement backend can run here.
 */
export function actorConfinement(input: {
  settings: { confine: ConfineMode; network: NetworkSetting };
  options: ActorConfinementOptions | undefined;
  /** Per-server network (lists, proxy); see actor-network.ts. */
  network?: { hook: ServerNetworkHook; cutsNetwork: boolean };
  sandboxRoot: string;
  /** The folder holding the sandbox's store and records (hidden); absent with the sandbox off. */
  sandboxContainer?: string;
  projectDir: string;
  workspaceRoot?: string | undefined;
  report: (message: string) => void;
}): Confinement {
  const { settings, options } = input;
  const confinement = resolveConfinement(
    {
      mode: options?.mode ?? settings.confine,
      // Host lists mean no network of its own: the probe then checks --unshare-net works too.
      network:
        (options?.network ?? settings.network) === true && input.network?.cutsNetwork !== true,
      ...(options?.bwrapPath === undefined ? {} : { bwrapPath: options.bwrapPath }),
      ...(input.network === undefined ? {} : { networkHook: input.network.hook }),
    },
    confinementScope({
      sandboxRoot: input.sandboxRoot,
      ...(input.sandboxContainer === undefined ? {} : { sandboxContainer: input.sandboxContainer }),
      projectDir: input.projectDir,
      ...(input.workspaceRoot === undefined ? {} : { workspaceRoot: input.workspaceRoot }),
    }),
  );
  reportUnconfinedOnce(confinement, input.report);
  return confinement;
}
