/**
 * `agents doctor`'s network section: each actor's effective network per server (its own
 * `network:` or the actor's `sandbox.network`), and whether it can be enforced here: a server
 * with host lists needs OS confinement that can cut its network, or it refuses to start.
 */
import type { NetworkSetting } from '../config/network-schema.js';
import { findConfinementBackend } from '../confinement/backends.js';
import { hasHostLists } from '../servers/network/server-network.js';
import { probeServerNetwork, type NetworkProbe } from './doctor-network-probe.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';

/** One server of one actor, as doctor shows it. */
export interface ServerNetworkLine {
  server: string;
  transport: string;
  /** Where the setting came from. */
  from: 'server' | 'actor';
  setting: NetworkSetting;
  /** The setting in words, and what happens here. */
  summary: string;
  /** The probe connection that must be refused (stdio servers with no or listed network). */
  probe?: NetworkProbe;
}

/** One actor's network. */
export interface ActorNetworkReport {
  actor: string;
  confine: string;
  setting: NetworkSetting;
  servers: ServerNetworkLine[];
  /** Problems found (a server that cannot start, a skill that could not be read). */
  problems: string[];
}

/** Reads every actor, its skills and their servers; never throws for one broken record. */
export async function actorNetworkReports(
  store: WorkspaceStore,
  options: { probe?: boolean } = {},
): Promise<ActorNetworkReport[]> {
  const { records } = await store.list('actor');
  // One probe (a spawn, cached per process) covers both: lists need a backend with the proxy.
  const namespaces = findConfinementBackend({ network: 'proxy' });
  const reports: ActorNetworkReport[] = [];
  for (const record of records) {
    const actor = record.value;
    const problems: string[] = [];
    const servers: ServerNetworkLine[] = [];
    const seen = new Set<string>();
    for (const skillName of actor.skills) {
      let skill;
      try {
        skill = await store.get('skill', skillName);
      } catch (error) {
        problems.push(`skill "${skillName}": ${(error as Error).message.split('\n')[0]}`);
        continue;
      }
      for (const entry of skill.mcpServers) {
        const name = typeof entry === 'string' ? entry : entry.name;
        if (seen.has(name)) continue;
        seen.add(name);
        let config;
        try {
          config = typeof entry === 'string' ? await store.get('server', entry) : entry;
        } catch (error) {
          problems.push(`server "${name}": ${(error as Error).message.split('\n')[0]}`);
          continue;
        }
        const own = config.network;
        const setting = own ?? actor.sandbox.network;
        const stdio = config.transport === 'stdio';
        let summary = describe(setting, stdio);
        if (stdio && hasHostLists(setting)) {
          const cannot =
            actor.sandbox.confine === 'off'
              ? 'sandbox.confine is "off"'
              : namespaces.available
                ? undefined
                : namespaces.reason;
          if (cannot !== undefined) {
            summary += ` — REFUSES TO START here: ${cannot}`;
            problems.push(`server "${name}" has host lists but cannot be confined: ${cannot}`);
          }
        }
        // Prove it: a connection that must be refused, under the confinement the server gets.
        let probe: NetworkProbe | undefined;
        if (
          options.probe === true &&
          stdio &&
          setting !== true &&
          actor.sandbox.confine !== 'off' &&
          namespaces.available
        ) {
          probe = await probeServerNetwork({
            serverName: name,
            setting,
            rules: actor.policy?.network ?? [],
            backend: namespaces.settings,
          });
          if (!probe.ok)
            problems.push(`server "${name}": the network probe was not refused: ${probe.detail}`);
        }
        servers.push({
          server: name,
          transport: config.transport,
          from: own === undefined ? 'actor' : 'server',
          setting,
          summary,
          ...(probe === undefined ? {} : { probe }),
        });
      }
    }
    reports.push({
      actor: record.name,
      confine: actor.sandbox.confine,
      setting: actor.sandbox.network,
      servers,
      problems,
    });
  }
  return reports;
}

function describe(setting: NetworkSetting, stdio: boolean): string {
  if (setting === true) return stdio ? 'open (its own network)' : 'open';
  if (setting === false) {
    return stdio ? 'none (loopback only, when confined)' : 'open (false applies to stdio servers)';
  }
  const lists = `allow ${setting.allow.join(', ') || '(nothing)'}${setting.deny.length > 0 ? `; deny ${setting.deny.join(', ')}` : ''}`;
  return stdio
    ? `only through the proxy: ${lists}; private, loopback, link-local and metadata addresses refused`
    : `checked at connect time and on redirects: ${lists}`;
}

/** The section as text lines. */
export function formatActorNetworkReports(reports: readonly ActorNetworkReport[]): string[] {
  if (reports.length === 0) return ['Network: no actors.'];
  const lines = ['Network (each actor’s servers, effective setting):'];
  for (const report of reports) {
    lines.push(`  actor "${report.actor}" (confine: ${report.confine})`);
    if (report.servers.length === 0) lines.push('    no MCP servers');
    for (const line of report.servers) {
      lines.push(
        `    ${line.server} (${line.transport}, from ${line.from === 'server' ? 'the server' : 'the actor'}): ${line.summary}`,
      );
      if (line.probe !== undefined)
        lines.push(
          `      probe ${line.probe.ok ? 'PASS (refused)' : 'FAIL'}: ${line.probe.detail}`,
        );
    }
    for (const problem of report.problems) lines.push(`    ! ${problem}`);
  }
  return lines;
}
