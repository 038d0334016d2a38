/**
 * Host lists compiled once (at activation) into a matcher: deny wins, then allow, and a host on
 * neither list is `unlisted` (refused, or asked about where the policy asks).
 */
import { isIP } from 'node:net';
import type { NetworkLists } from '../../config/network-schema.js';

/** One compiled pattern. */
export interface HostRule {
  /** The pattern as written, for messages and the audit log. */
  text: string;
  /** Lower-case host, without `*.` and port; an IP literal without brackets. */
  host: string;
  wildcard: boolean;
  port: number | undefined;
}

/** What the lists say about one host and port. */
export type HostVerdict =
  | { decision: 'deny'; rule: string }
  | { decision: 'allow'; rule: string; literalAddress: boolean }
  /** On no list, and a policy rule says a human decides (the connection is refused meanwhile). */
  | { decision: 'ask'; rule: string; reason: string }
  | { decision: 'unlisted' };

/**
 * What decides a host on neither list (the actor's policy `network` rules and approved hosts);
 * `unlisted` refuses as without it.
 */
export type UnlistedHostHook = (host: string, port: number) => HostVerdict;

/** Compiled host lists. */
export interface HostRules {
  readonly allow: readonly string[];
  readonly deny: readonly string[];
  check(host: string, port: number): HostVerdict;
}

/** Compiles `{ allow, deny }`; patterns were validated by the config schema. */
export function compileHostRules(lists: NetworkLists, unlisted?: UnlistedHostHook): HostRules {
  const allow = lists.allow.map(parsePattern);
  const deny = lists.deny.map(parsePattern);
  return {
    allow: lists.allow,
    deny: lists.deny,
    check(host, port) {
      const name = normalizeHost(host);
      const denied = deny.find((rule) => matches(rule, name, port));
      if (denied !== undefined) return { decision: 'deny', rule: denied.text };
      const allowed = allow.find((rule) => matches(rule, name, port));
      if (allowed !== undefined) {
        return {
          decision: 'allow',
          rule: allowed.text,
          literalAddress: namesAddress(allowed),
        };
      }
      return unlisted?.(name, port) ?? { decision: 'unlisted' };
    },
  };
}

/** Only an entry that names the address itself may open a private address. */
export function namesAddress(rule: HostRule): boolean {
  return !rule.wildcard && (isIP(rule.host) !== 0 || rule.host === 'localhost');
}

/** Lower case, no trailing dot, no IPv6 brackets: the form patterns are compared in. */
export function normalizeHost(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  if (name.endsWith('.')) name = name.slice(0, -1);
  return name;
}

/** Compiles one pattern (validated by the config schema). */
export function parsePattern(text: string): HostRule {
  let rest = text.trim().toLowerCase();
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  if (bracketed !== null) {
    return {
      text,
      host: bracketed[1]!,
      wildcard: false,
      port: bracketed[2] === undefined ? undefined : Number(bracketed[2]),
    };
  }
  const withPort = /^(.*):(\d+)$/.exec(rest);
  if (withPort !== null) {
    rest = withPort[1]!;
    port = Number(withPort[2]);
  }
  const wildcard = rest.startsWith('*.');
  return { text, host: normalizeHost(wildcard ? rest.slice(2) : rest), wildcard, port };
}

/** True when a compiled pattern matches a normalized host and a port. */
export function matches(rule: HostRule, host: string, port: number): boolean {
  if (rule.port !== undefined && rule.port !== port) return false;
  // `*.example.com` matches sub.example.com and a.b.example.com, not example.com itself or
  // evilexample.com (whole labels only).
  return rule.wildcard ? host.endsWith(`.${rule.host}`) : host === rule.host;
}
