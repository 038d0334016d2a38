import type { ConfinementBackend, ConfinementProbe } from './confinement.js';
import { bubblewrapBackend } from './confinement-bubblewrap.js';

/** The backend that never confines: what `sandbox.confine: off` and an unconfinable host get. */
export const noneBackend: ConfinementBackend = {
  name: 'none',
  platforms: 'all',
  confines: false,
  probe: () => ({ available: true, path: '' }),
  wrap: (_path, input) => ({ command: input.command, args: [...input.args] }),
  hides: () => [],
  doctorChecks: () => [],
};

/**
 * The confinement backends, tried in this order on the platforms each names; `none` last (it
 * never confines: what runs when no other can, or with `sandbox.confine: off`). A new one (macOS
 * Seatbelt, a container runtime) is a module implementing {@link ConfinementBackend} and an
 * entry here.
 */
export const CONFINEMENT_BACKENDS: readonly ConfinementBackend[] = [bubblewrapBackend, noneBackend];

/** True when `backend` runs on `platform`. */
export function runsOn(backend: ConfinementBackend, platform: NodeJS.Platform): boolean {
  return backend.platforms === 'all' || backend.platforms.includes(platform);
}

/** The backend that confines servers here and its executable, or why none can. */
export type FoundConfinement =
  | { available: true; backend: ConfinementBackend; path: string }
  | { available: false; reason: string; fix?: string };

/**
 * Probes the backends for this platform in table order and returns the first that works. The
 * reason when none does is the first backend's (the one a person would install), or that no
 * backend exists for the platform.
 */
export function findConfinementBackend(
  settings: { network: boolean; bwrapPath?: string | undefined },
  platform: NodeJS.Platform = process.platform,
  backends: readonly ConfinementBackend[] = CONFINEMENT_BACKENDS,
): FoundConfinement {
  const confining = backends.filter((backend) => backend.confines);
  const here = confining.filter((backend) => runsOn(backend, platform));
  if (here.length === 0) {
    const known = confining.map(
      (backend) =>
        `${backend.name}: ${backend.platforms === 'all' ? 'all' : backend.platforms.join(', ')}`,
    );
    return {
      available: false,
      reason: `no OS confinement backend runs on ${platform} yet (${known.join('; ')})`,
    };
  }
  let first: Exclude<ConfinementProbe, { available: true }> | undefined;
  let firstBackend: ConfinementBackend | undefined;
  for (const backend of here) {
    const probe = backend.probe(settings);
    if (probe.available) return { available: true, backend, path: probe.path };
    if (first === undefined) {
      first = probe;
      firstBackend = backend;
    }
  }
  const fix = first!.fix ?? firstBackend!.installHint;
  return { available: false, reason: first!.reason, ...(fix === undefined ? {} : { fix }) };
}
