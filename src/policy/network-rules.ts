/**
 * The policy's `network` rules: what happens to a connection to a host on none of a server's
 * `network` lists (allow, deny, or ask a human), and the hosts a human approved (pins). They
 * decide only what the lists leave open: a host the lists deny stays denied, one they allow
 * stays allowed.
 */
import { isIP } from 'node:net';
import type { NetworkPolicyRule } from '../config/policy-schema.js';
import {
  matches,
  namesAddress,
  parsePattern,
  type HostRule,
  type UnlistedHostHook,
} from '../servers/network/host-rules.js';
import { hostPinKey, type HostPin } from './pins.js';
import type { PolicyDecision } from '../config/policy-schema.js';

/** Read access to approved hosts. */
export interface HostPinLookup {
  getHost(key: string): HostPin | undefined;
}

interface CompiledNetworkRule {
  pattern: HostRule | undefined; // undefined: `*`
  decision: PolicyDecision;
  reason: string | undefined;
  label: string;
  specificity: number;
}

/** The verdict of the rules on one host, or undefined when none matches. */
export interface NetworkRuleVerdict {
  decision: PolicyDecision;
  /** e.g. `policy.network[1] {host: "*.example.com"}`. */
  label: string;
  reason: string;
  /** True when the rule names the address itself (it may then open a private address). */
  literalAddress: boolean;
}

const RESTRICTIVENESS: Record<PolicyDecision, number> = { allow: 0, ask: 1, deny: 2 };

/** Compiles the rules once (at activation). */
export function compileNetworkRules(
  rules: readonly NetworkPolicyRule[],
): (host: string, port: number) => NetworkRuleVerdict | undefined {
  const compiled: CompiledNetworkRule[] = rules.map((rule, index) => {
    const pattern = rule.host === '*' ? undefined : parsePattern(rule.host);
    // Exact name > wildcard > `*`; a port narrows; a longer wildcard suffix is more specific.
    const specificity =
      pattern === undefined
        ? 0
        : (pattern.wildcard ? 1_000 : 100_000) +
          (pattern.port === undefined ? 0 : 50_000) +
          pattern.host.length;
    return {
      pattern,
      decision: rule.decision,
      reason: rule.reason,
      label: `policy.network[${index}] {host: ${JSON.stringify(rule.host)}}`,
      specificity,
    };
  });
  return (host, port) => {
    let best: CompiledNetworkRule | undefined;
    for (const rule of compiled) {
      if (rule.pattern !== undefined && !matches(rule.pattern, host, port)) continue;
      if (
        best === undefined ||
        rule.specificity > best.specificity ||
        (rule.specificity === best.specificity &&
          RESTRICTIVENESS[rule.decision] > RESTRICTIVENESS[best.decision])
      )
        best = rule;
    }
    if (best === undefined) return undefined;
    return {
      decision: best.decision,
      label: best.label,
      reason: best.reason ?? `${best.label} says ${best.decision}`,
      literalAddress: best.pattern !== undefined && namesAddress(best.pattern),
    };
  };
}

/**
 * The hook the proxy asks about one server's unlisted hosts: the most specific rule decides; an
 * `ask` host a human approved for this server (a pin) is allowed. An approved IP literal may be
 * a private address (the human approved that very address); an approved name still gets the
 * resolved-address check.
 */
export function unlistedHostHook(
  serverName: string,
  decideRule: (host: string, port: number) => NetworkRuleVerdict | undefined,
  pins: HostPinLookup | undefined,
): UnlistedHostHook {
  return (host, port) => {
    const verdict = decideRule(host, port);
    if (verdict === undefined) return { decision: 'unlisted' };
    if (verdict.decision === 'deny') return { decision: 'deny', rule: verdict.label };
    if (verdict.decision === 'allow')
      return { decision: 'allow', rule: verdict.label, literalAddress: verdict.literalAddress };
    const pin = pins?.getHost(hostPinKey(serverName, host, port));
    if (pin !== undefined) {
      return {
        decision: 'allow',
        rule: `approved by ${pin.approvedBy} at ${pin.approvedAt} (${verdict.label})`,
        literalAddress: isIP(host) !== 0,
      };
    }
    return { decision: 'ask', rule: verdict.label, reason: verdict.reason };
  };
}
