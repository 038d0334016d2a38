import { z } from 'zod';

/**
 * Each confinement backend's settings (`sandbox.confinement: { type, ... }`), validated when a
 * config is read. Kept apart from the backends so that resolving a confinement loads no zod (the
 * commands that only open a sandbox stay light); a new backend adds its schema here beside its
 * entry in `confinementBackends`.
 */
export const BubblewrapSettingsSchema = z
  .object({
    type: z.literal('bubblewrap'),
    path: z
      .string()
      .min(1)
      .optional()
      .describe('The bubblewrap executable: a path, or a name looked up on PATH. Default `bwrap`.'),
  })
  .strict();
export type BubblewrapSettings = z.infer<typeof BubblewrapSettingsSchema>;

/** `sandbox.confinement` for Landlock: the Python 3 that runs the helper. */
export const LandlockSettingsSchema = z
  .object({
    type: z.literal('landlock'),
    python: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The python3 that applies the rules before the server starts. Default /usr/bin/python3.',
      ),
  })
  .strict();
export type LandlockSettings = z.infer<typeof LandlockSettingsSchema>;

/** `sandbox.confinement:` of an actor's config: one backend's settings, chosen by `type`. */
export const ConfinementBackendSettingsSchema = z
  .union([BubblewrapSettingsSchema, LandlockSettingsSchema])
  .describe(
    'Which OS confinement backend confines stdio servers, with its own settings. Absent: the first that works here.',
  );

/** Backend settings as users write them (`sandbox.confinement`). */
export type ConfinementBackendSettings = z.output<typeof ConfinementBackendSettingsSchema>;
