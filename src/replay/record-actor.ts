/**
 * What `agents thread replay` rebuilds a recorded actor from, written into the cassette when the
 * recording starts: the actor's config and the configs of the skills and servers it uses, as
 * parsed and redacted (a server's secrets are never needed: a replay starts no server).
 */
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import type { ActorEntry } from './cassette.js';
import type { CassetteRecorder } from './cassette-recorder.js';

/** Records actor `name` of `store` as the cassette's `actor` entry. */
export async function recordActorConfig(
  recorder: CassetteRecorder,
  store: WorkspaceStore,
  name: string,
): Promise<void> {
  const config = await store.get('actor', name);
  const skills: ActorEntry['skills'] = {};
  const servers: ActorEntry['servers'] = {};
  for (const skillName of config.skills) {
    const skill = await store.get('skill', skillName);
    skills[skillName] = recorder.redact(skill) as Record<string, unknown>;
    for (const serverName of skill.mcpServers ?? []) {
      // An inline server config is part of the skill's own config, recorded above.
      if (typeof serverName !== 'string' || servers[serverName] !== undefined) continue;
      servers[serverName] = recorder.redact(await store.get('server', serverName)) as Record<
        string,
        unknown
      >;
    }
  }
  recorder.record({
    kind: 'actor',
    name,
    config: recorder.redact(config) as Record<string, unknown>,
    servers,
    skills,
  });
}
