/**
 * The proxy's decision for one connection: the host lists first (by name), then the resolved
 * address (no loopback, private, link-local, metadata or host addresses unless allowed).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { classifyAddress, hostAddresses } from './address-check.js';
import { normalizeHost, type HostRules } from './host-rules.js';

/** How a connection reached the proxy (`remote`: the library's own connection to a remote server). */
export type ProxyProtocol = 'http' | 'connect' | 'socks5' | 'remote';

/** What a decision was about: a connection, or a human's answer to a network approval. */
export type DecisionProtocol = ProxyProtocol | 'approval';

/** One logged decision (the audit log gets one per connection or plain-HTTP request). */
export interface NetworkDecision {
  time: string;
  serverName: string;
  protocol: DecisionProtocol;
  host: string;
  port: number;
  /** The address connected to (allowed) or refused. */
  address?: string;
  decision: 'allow' | 'deny';
  /** Why, in words: the rule that matched, or what the address is. */
  reason: string;
  /** The list entry that decided, when one did. */
  rule?: string;
  /** Refused until a human approves (policy `network` rule `ask`). */
  approval?: NetworkApprovalNeed;
  /** A request the proxy could not parse (host '' and port 0): its first bytes, as latin1. */
  unparsed?: string;
}

/** Name resolution: the addresses of a host (several for round-robin names). */
export type Resolver = (host: string) => Promise<string[]>;

/** Options shared by every decision of one proxy. */
export interface DecisionOptions {
  resolve?: Resolver;
  /**
   * Tests only: host names resolved to the given (loopback) address without DNS. The address
   * check is waived for these names alone, so tests can stand loopback ports in for hosts.
   */
  testHosts?: Readonly<Record<string, string>>;
}

const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** The verdict on a target: where to connect, or why not. */
export type TargetVerdict =
  | { allowed: true; address: string; reason: string; rule: string }
  | {
      allowed: false;
      reason: string;
      rule?: string;
      address?: string;
      /** Set when a human may allow it (policy `network` rule `ask`). */
      approval?: NetworkApprovalNeed;
    };

/** A host a policy rule wants a human to approve before a server connects to it. */
export interface NetworkApprovalNeed {
  host: string;
  port: number;
  /** The policy rule that asks, e.g. `policy.network[0] {host: "*"}`. */
  rule: string;
  reason: string;
}

/** Decides one target. Never throws: a failed lookup is a refusal. */
export async function decideTarget(
  rules: HostRules,
  rawHost: string,
  port: number,
  options: DecisionOptions,
): Promise<TargetVerdict> {
  const host = normalizeHost(rawHost);
  // Checked before any list: a name with a newline, an escape or a space in it is no host, and
  // must not reach a wildcard rule, the resolver or an approval question.
  if (!isHostName(host) || rawHost.trim() !== rawHost)
    return { allowed: false, reason: `not a valid host name or address (${host.length} chars)` };
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    return { allowed: false, reason: `invalid port ${port}` };
  const verdict = rules.check(host, port);
  if (verdict.decision === 'deny')
    return { allowed: false, reason: `denied by "${verdict.rule}"`, rule: verdict.rule };
  if (verdict.decision === 'unlisted')
    return { allowed: false, reason: 'on no allow list (sandbox.network.allow)' };
  if (verdict.decision === 'ask') {
    return {
      allowed: false,
      reason: `network approval needed for ${host}:${port} (${verdict.reason})`,
      rule: verdict.rule,
      approval: { host, port, rule: verdict.rule, reason: verdict.reason },
    };
  }
  const testAddress = options.testHosts?.[host];
  let addresses: string[];
  if (testAddress !== undefined) addresses = [testAddress];
  else if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = await (options.resolve ?? systemResolver)(host);
    } catch (error) {
      return {
        allowed: false,
        reason: `cannot resolve ${host}: ${(error as { code?: string }).code ?? String(error)}`,
        rule: verdict.rule,
      };
    }
  }
  const own = hostAddresses();
  let refused: { address: string; kind: string } | undefined;
  for (const address of addresses) {
    const kind =
      testAddress !== undefined || verdict.literalAddress
        ? undefined
        : classifyAddress(address, own);
    if (kind === undefined)
      return { allowed: true, address, reason: `allowed by "${verdict.rule}"`, rule: verdict.rule };
    refused ??= { address, kind };
  }
  if (refused === undefined) return { allowed: false, reason: `${host} has no address` };
  return {
    allowed: false,
    address: refused.address,
    reason: `${host} resolves to ${refused.address}, a ${refused.kind} address (allow it only by naming the address in sandbox.network.allow)`,
    rule: verdict.rule,
  };
}

/**
 * True for an IP literal or a DNS name (labels of letters, digits, `-` and `_`, at most 63
 * characters each, 253 in all), as {@link normalizeHost} leaves it.
 */
export function isHostName(host: string): boolean {
  if (isIP(host) !== 0) return true;
  return (
    host.length > 0 &&
    host.length <= 253 &&
    host.split('.').every((label) => /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/.test(label))
  );
}

/**
 * At most `maxBytes` bytes of a request the proxy refused unparsed, for the audit (latin1: one
 * char per byte; escaped when written and printed).
 */
export function wireExcerpt(bytes: Buffer, maxBytes = 64): string {
  const head = bytes.subarray(0, maxBytes).toString('latin1');
  return bytes.length > maxBytes ? `${head}…(${bytes.length} bytes)` : head;
}
