import { confinementScope } from '../runtime/confinement-scope.js';
import type { NetworkSetting } from '../config/network-schema.js';
import type { DecisionOptions } from '../servers/network/proxy-decision.js';
import type { ServerNetworkHook } from '../servers/network/server-network.js';
import type { ConfineMode, NetworkAccess } from '../confinement/backend.js';
import type { ConfinementBackendSettings } from '../confinement/backends.js';
import {
  reportUnconfinedOnce,
  resolveConfinement,
  type Confinement,
} from '../confinement/confinement.js';

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
  /** Wins over `sandbox.confinement`: the backend and its settings (`{ type: 'bubblewrap', path }`). */
  backend?: ConfinementBackendSettings;
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
  settings: {
    confine: ConfineMode;
    network: NetworkSetting;
    confinement?: ConfinementBackendSettings | undefined;
  };
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
      // Host lists mean no network of its own: the backend must offer the proxy.
      network: networkNeed(options?.network ?? settings.network, input.network?.cutsNetwork),
      backend: options?.backend ?? settings.confinement,
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

/** The most an activation's servers need of a backend's network (see `NetworkAccess`). */
function networkNeed(setting: NetworkSetting, cutsNetwork: boolean | undefined): NetworkAccess {
  if (typeof setting === 'object') return 'proxy';
  if (setting === false) return 'none';
  return cutsNetwork === true ? 'proxy' : 'open';
}
