/**
 * Each server's effective network (its own `network:` or the actor's `sandbox.network`) and
 * what it means at launch: the network intent (none, proxy, open) and command line of a confined stdio
 * server, and the guarded fetch of a remote one. Built once per activation.
 */
import { basename, dirname } from 'node:path';
import type { FetchLike } from '@modelcontextprotocol/client';
import type { NetworkSetting } from '../../config/network-schema.js';
import type { NetworkLaunch, NetworkPlanner } from '../../confinement/backend.js';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { forwarderCommand, NAMESPACE_SOCKET_DIR, proxyEnvironment } from './forwarder.js';
import { compileHostRules, type HostRules, type UnlistedHostHook } from './host-rules.js';
import type { DecisionOptions, NetworkDecision } from './proxy-decision.js';
import type { NetworkProxy } from './proxy.js';
import { guardedFetch } from './remote-guard.js';

/** The network hook the confinement calls for each server, and remote servers' fetch. */
export interface ServerNetworkHook extends NetworkPlanner {
  /** The effective setting of a server (unknown names get the actor's). */
  settingOf(serverName: string | undefined): NetworkSetting;
  /** A fetch applying the server's host lists (redirects included), or undefined for none. */
  remoteFetch(serverName: string): FetchLike | undefined;
}

/** What {@link createServerNetwork} needs. */
export interface ServerNetworkOptions extends DecisionOptions {
  /** The actor's `sandbox.network`. */
  actor: NetworkSetting;
  /** Each server's own `network:` (absent: the actor's). */
  servers: ReadonlyMap<string, NetworkSetting | undefined>;
  /** The running proxy, when some stdio server has host lists. */
  proxy?: NetworkProxy;
  /** Decisions about remote servers (the proxy reports its own). */
  onDecision?: (decision: NetworkDecision) => void;
  /** The fix named when bubblewrap is unavailable. */
  confinementHint?: string;
  /** What decides a server's hosts on neither list (the policy's `network` rules). */
  unlistedFor?: (serverName: string) => UnlistedHostHook | undefined;
}

/** True for `{ allow, deny }`. */
export function hasHostLists(
  setting: NetworkSetting | undefined,
): setting is Exclude<NetworkSetting, boolean> {
  return typeof setting === 'object';
}

/** The hook of a confinement, when it is this layer's (it also guards remote servers). */
export function serverNetworkHookOf(
  planner: NetworkPlanner | undefined,
): ServerNetworkHook | undefined {
  return planner !== undefined && 'remoteFetch' in planner
    ? (planner as ServerNetworkHook)
    : undefined;
}

/** Builds the hook; host lists are compiled here, once. */
export function createServerNetwork(options: ServerNetworkOptions): ServerNetworkHook {
  const compiled = new Map<string, HostRules>();
  const settingOf = (serverName: string | undefined): NetworkSetting =>
    (serverName === undefined ? undefined : options.servers.get(serverName)) ?? options.actor;
  const rulesOf = (serverName: string | undefined): HostRules | undefined => {
    const setting = settingOf(serverName);
    if (!hasHostLists(setting)) return undefined;
    const key = serverName ?? '';
    let rules = compiled.get(key);
    if (rules === undefined) {
      const unlisted = serverName === undefined ? undefined : options.unlistedFor?.(serverName);
      compiled.set(key, (rules = compileHostRules(setting, unlisted)));
    }
    return rules;
  };
  return {
    settingOf,
    launch(serverName, confined, command, args, unconfinedBecause): NetworkLaunch {
      const setting = settingOf(serverName);
      if (!hasHostLists(setting))
        return {
          network: setting === false ? 'none' : 'open',
          env: {},
          command,
          args: [...args],
        };
      const name = serverName ?? 'server';
      if (!confined) {
        throw new AgentsError(
          AgentsErrorCode.ConfinementUnavailable,
          `Server "${name}" was not started: it has network host lists (sandbox.network allow/deny), which need OS confinement to take its own network away, and it would run unconfined here${unconfinedBecause === undefined ? '' : ` (${unconfinedBecause})`}. ` +
            `Install bubblewrap (\`${options.confinementHint ?? 'apt-get install bubblewrap'}\`) and keep sandbox.confine at "auto" or "required", or set network: false (no network) or true (open network) for this server.`,
          { details: { serverName: name, reason: 'unconfined' } },
        );
      }
      const socket = serverName === undefined ? undefined : options.proxy?.socketOf(serverName);
      if (socket === undefined) {
        throw new AgentsError(
          AgentsErrorCode.ConfinementUnavailable,
          `Server "${name}" was not started: it has network host lists, and the network proxy that is its only way out is ${options.proxy?.closed === true ? 'closed (the actor is stopping or stopped)' : 'not running'}. ` +
            'Activate the actor again (the proxy starts with it); a server with lists never starts with open network.',
          { details: { serverName: name, reason: 'proxy-unavailable' } },
        );
      }
      const inside = `${NAMESPACE_SOCKET_DIR}/${basename(socket)}`;
      const env = proxyEnvironment();
      const forwarded = forwarderCommand(process.execPath, inside, command, args);
      return {
        network: 'proxy',
        proxy: { folder: dirname(socket), at: NAMESPACE_SOCKET_DIR },
        env,
        command: forwarded.command,
        args: forwarded.args,
      };
    },
    remoteFetch(serverName) {
      const rules = rulesOf(serverName);
      if (rules === undefined) return undefined;
      return guardedFetch(serverName, rules, options);
    },
  };
}
