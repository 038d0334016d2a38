import type { ConfinementBackend, ConfinementProbe, NetworkAccess } from './backend.js';
import { bubblewrapBackend } from './bubblewrap.js';
import { landlockBackend } from './landlock.js';

/**
 * The confinement backends, keyed by `sandbox.confinement.type`, tried in this order on the
 * platforms each names when no type is set. A new one (a container runtime, macOS Seatbelt) is
 * one file under `src/confinement/` implementing {@link ConfinementBackend} and one entry here;
 * the config schema and every caller follow from it.
 */
export const confinementBackends = {
  bubblewrap: bubblewrapBackend,
  landlock: landlockBackend,
} as const;

/** The backend names users may write as `sandbox.confinement.type`. */
export type ConfinementBackendType = keyof typeof confinementBackends;

export type { ConfinementBackendSettings } from './settings.js';

const table = confinementBackends as Record<string, ConfinementBackend | undefined>;

/** All backends, in table order (typed as the general interface). */
export function allConfinementBackends(): ConfinementBackend[] {
  return Object.values(table).filter((backend) => backend !== undefined);
}

/** True when `backend` runs on `platform`. */
export function runsOn(backend: ConfinementBackend, platform: NodeJS.Platform): boolean {
  return backend.platforms.includes(platform);
}

/** The backend that confines servers here and its executable, or why none can. */
export type FoundConfinement =
  | { available: true; backend: ConfinementBackend; settings: { type: string }; path: string }
  | { available: false; reason: string; fix?: string };

/**
 * The backend `settings` name (validated when the config was read), or else each backend for this platform
 * in table order: the first that works for `network`. The reason when none does is the first
 * backend's (the one a person would install), or that no backend exists for the platform.
 */
export function findConfinementBackend(
  settings: {
    network: NetworkAccess;
    backend?: { type: string; [setting: string]: unknown } | undefined;
  },
  platform: NodeJS.Platform = process.platform,
  backends: readonly ConfinementBackend[] = allConfinementBackends(),
): FoundConfinement {
  const named = settings.backend;
  const candidates =
    named === undefined
      ? backends.filter((backend) => backend.onlyWhenNamed !== true)
      : backends.filter((backend) => backend.type === named.type);
  if (named !== undefined && candidates.length === 0) {
    return {
      available: false,
      reason: `sandbox.confinement names the backend "${named.type}", which does not exist (known: ${backends.map((backend) => backend.type).join(', ')})`,
    };
  }
  const here = candidates.filter((backend) => runsOn(backend, platform));
  if (here.length === 0) {
    const known = candidates.map((backend) => `${backend.type}: ${backend.platforms.join(', ')}`);
    return {
      available: false,
      reason: `no OS confinement backend runs on ${platform} yet (${known.join('; ')})`,
    };
  }
  let first:
    | { probe: Exclude<ConfinementProbe, { available: true }>; backend: ConfinementBackend }
    | undefined;
  for (const backend of here) {
    const own = named ?? { type: backend.type };
    const probe: ConfinementProbe = backend.guarantees.network.includes(settings.network)
      ? backend.probe(own, settings.network)
      : {
          available: false,
          reason: `${backend.type} cannot give a server network "${settings.network}" (it offers ${backend.guarantees.network.join(', ')})`,
        };
    if (probe.available) return { available: true, backend, settings: own, path: probe.path };
    if (!probe.available) first ??= { probe, backend };
  }
  const fix = first!.probe.fix ?? first!.backend.installHint;
  return { available: false, reason: first!.probe.reason, ...(fix === undefined ? {} : { fix }) };
}
