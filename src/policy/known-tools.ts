import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../core/atomic-write.js';
import type { PinLookup } from './pins.js';

/** Folder (inside a workspace) of the per-actor lists of tools that are not new. */
export const KNOWN_TOOLS_DIR = 'known-tools';

interface KnownToolsFile {
  version: 1;
  ids: string[];
}

async function readKnown(file: string): Promise<Set<string> | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as Partial<KnownToolsFile>;
    if (parsed.version !== 1 || !Array.isArray(parsed.ids)) return undefined;
    return new Set(parsed.ids.filter((id): id is string => typeof id === 'string'));
  } catch {
    // A broken list only makes this activation start from what is listed now.
    return undefined;
  }
}

/**
 * Which of an actor's tools at activation still count as "new" (appeared at run time and never
 * approved), so the `newTools` rule survives a restart: a tool that appeared during an earlier
 * run (`list_changed`) and was not approved is not waved through just because it is listed at
 * the next activation.
 *
 * The actor's list (`<workspace>/known-tools/<actor>.json`) holds the tools that are not new.
 * At the first activation it is every tool listed then; afterwards a listed tool is known when
 * it was known before or has a pin (was approved or allowed). The list is rewritten each time.
 * Returns the listed tools that are new.
 */
export async function settleKnownTools(options: {
  workspaceRoot: string;
  actor: string;
  ids: Iterable<string>;
  pins: PinLookup;
}): Promise<Set<string>> {
  const file = join(options.workspaceRoot, KNOWN_TOOLS_DIR, `${options.actor}.json`);
  const before = await readKnown(file);
  const known: string[] = [];
  const fresh = new Set<string>();
  for (const id of options.ids) {
    if (before === undefined || before.has(id) || options.pins.get(id) !== undefined)
      known.push(id);
    else fresh.add(id);
  }
  const body: KnownToolsFile = { version: 1, ids: known.sort() };
  await writeFileAtomic(file, `${JSON.stringify(body, null, 2)}\n`);
  return fresh;
}
