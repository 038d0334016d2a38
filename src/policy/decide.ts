import type { Capabilities, CapabilityVerdict, ToolDescriptor } from '../core/tool-descriptor.js';
import type { PinLookup } from './pins.js';
import type {
  Policy,
  PolicyDecision,
  PolicyMatch,
  PolicyRule,
  ToolPolicy,
} from '../config/policy-schema.js';
import { isGlob, matchesGlob } from '../core/glob.js';

/** Where a policy verdict came from. */
export type PolicyRuleKind =
  /** An entry of `tools:` (actor or skill). */
  | 'tool'
  /** An entry of `rules:` (actor or skill). */
  | 'rule'
  /** No rule matched: the mode's default. */
  | 'mode'
  /** `read-only` mode refused a tool that is not read-only. */
  | 'read-only'
  /** The tool appeared at run time (`newTools`). */
  | 'new-tool'
  /** The tool's definition changed since it was pinned. */
  | 'pin'
  /** The active Agent Skill's `allowed-tools` does not list the tool. */
  | 'allowed-tools'
  /** A `network` rule asks about a host a server connected to during the call. */
  | 'network';

/** Which rule produced a verdict. */
export interface PolicyRuleRef {
  kind: PolicyRuleKind;
  /** `actor` for top-level entries, `skill` for `skills.NAME` entries. */
  scope: 'actor' | 'skill';
  skill?: string;
  /** Index in `rules`, for `kind: 'rule'`. */
  index?: number;
  /** Key in `tools`, for `kind: 'tool'`. */
  key?: string;
  /** Readable location, e.g. `rules[1] {writes: true}` or `skills.git.tools["mcp:git/push"]`. */
  label: string;
}

/** The outcome of {@link decide}. */
export interface PolicyVerdict {
  decision: PolicyDecision;
  rule: PolicyRuleRef;
  /** Why, in a sentence fit for the model (deny) or a human (ask). */
  reason: string;
}

/** Run-time facts `decide` needs besides the descriptor and the policy. */
export interface DecideOptions {
  /** Pinned fingerprints; a pinned tool whose fingerprint changed always needs approval. */
  pins?: PinLookup;
  /**
   * `allowed-tools` of the active Agent Skill(s), when any is active: the policy is narrowed to
   * these (tool id, name or original name; `*` globs; `Name(args)` entries cap at `ask`, since
   * argument patterns are not enforced). Undefined means no narrowing.
   */
  activeSkillAllowedTools?: readonly string[];
  /** The skill this tool belongs to, so `skills.NAME` refinements apply. */
  skill?: string;
  /** True when the tool appeared after activation (a `tools/list_changed` refresh). */
  addedAtRuntime?: boolean;
}

const RESTRICTIVENESS: Record<PolicyDecision, number> = { allow: 0, ask: 1, deny: 2 };

/** True when `a` is stricter than `b` (`deny` > `ask` > `allow`). */
export function isStricter(a: PolicyDecision, b: PolicyDecision): boolean {
  return RESTRICTIVENESS[a] > RESTRICTIVENESS[b];
}

/** Capability values with the MCP spec's conservative defaults filled in for missing verdicts. */
export interface EffectiveCapabilities {
  readOnly: boolean;
  writes: boolean;
  destructive: boolean;
  openWorld: boolean;
}

function verdictValue(verdict: CapabilityVerdict | undefined, fallback: boolean): boolean {
  return typeof verdict?.value === 'boolean' ? verdict.value : fallback;
}

/**
 * Reads a descriptor's capability verdicts. A missing or non-boolean verdict takes the
 * conservative default (MCP: readOnly false, destructive true, openWorld true), and a tool counts
 * as read-only only when `readOnly` is true AND neither `writes` nor `destructive` is: a
 * contradictory tool is a write tool. The description is never consulted.
 */
export function effectiveCapabilities(
  capabilities: Capabilities | undefined,
): EffectiveCapabilities {
  const readOnlyClaim = verdictValue(capabilities?.readOnly, false);
  const writes = verdictValue(capabilities?.writes, true);
  const destructive = verdictValue(capabilities?.destructive, true);
  const openWorld = verdictValue(capabilities?.openWorld, true);
  const readOnly = readOnlyClaim && !writes && !destructive;
  return { readOnly, writes: writes || !readOnly, destructive, openWorld };
}

/**
 * True when a tool pattern (exact or glob) names this tool by id, by model-facing name, or (an
 * MCP tool) by its server address `mcp:SERVER/TOOL`. A tool reached through a tool resource has
 * the resource's id (`repo.status`); matching the address too keeps a server-wide rule such as
 * `deny: mcp:git/*` applying to it.
 */
export function matchesTool(
  pattern: string,
  descriptor: Pick<ToolDescriptor, 'id' | 'name'> &
    Partial<Pick<ToolDescriptor, 'source' | 'serverName' | 'originalName'>>,
): boolean {
  if (matchesGlob(pattern, descriptor.id) || matchesGlob(pattern, descriptor.name)) return true;
  const address =
    descriptor.source === 'mcp' && descriptor.serverName !== undefined
      ? `mcp:${descriptor.serverName}/${descriptor.originalName}`
      : undefined;
  return address !== undefined && address !== descriptor.id && matchesGlob(pattern, address);
}

const CAPABILITY_KEYS = ['writes', 'destructive', 'openWorld', 'readOnly'] as const;

interface Candidate {
  /** 4 exact tool, 3 tool glob, 2 capability-only. */
  specificity: number;
  scopeRank: number;
  /** Extra tie-breakers: capability fields matched, then literal characters of a glob. */
  detail: number;
  literal: number;
  decision: PolicyDecision;
  reason: string | undefined;
  ref: PolicyRuleRef;
}

function compareCandidates(a: Candidate, b: Candidate): number {
  return (
    a.specificity - b.specificity ||
    a.scopeRank - b.scopeRank ||
    a.detail - b.detail ||
    a.literal - b.literal ||
    // Equal specificity: the most restrictive decision wins.
    RESTRICTIVENESS[a.decision] - RESTRICTIVENESS[b.decision]
  );
}

function describeMatch(match: PolicyMatch): string {
  const parts: string[] = [];
  if (match.tool !== undefined) parts.push(`tool: ${JSON.stringify(match.tool)}`);
  for (const key of CAPABILITY_KEYS)
    if (match[key] !== undefined) parts.push(`${key}: ${String(match[key])}`);
  return `{${parts.join(', ')}}`;
}

function ruleCandidate(
  rule: PolicyRule,
  index: number,
  descriptor: ToolDescriptor,
  capabilities: EffectiveCapabilities,
  scope: { scope: 'actor' | 'skill'; skill?: string; rank: number; prefix: string },
): Candidate | undefined {
  const { match } = rule;
  let capabilityFields = 0;
  for (const key of CAPABILITY_KEYS) {
    const wanted = match[key];
    if (wanted === undefined) continue;
    if (capabilities[key] !== wanted) return undefined;
    capabilityFields++;
  }
  let specificity = 2;
  let literal = 0;
  if (match.tool !== undefined) {
    if (!matchesTool(match.tool, descriptor)) return undefined;
    specificity = isGlob(match.tool) ? 3 : 4;
    literal = match.tool.replace(/[*?]/g, '').length;
  }
  return {
    specificity,
    scopeRank: scope.rank,
    detail: capabilityFields,
    literal,
    decision: rule.decision,
    reason: rule.reason,
    ref: {
      kind: 'rule',
      scope: scope.scope,
      ...(scope.skill === undefined ? {} : { skill: scope.skill }),
      index,
      label: `${scope.prefix}rules[${index}] ${describeMatch(match)}`,
    },
  };
}

function toolCandidates(
  tools: Record<string, ToolPolicy>,
  descriptor: ToolDescriptor,
  scope: { scope: 'actor' | 'skill'; skill?: string; rank: number; prefix: string },
): Candidate[] {
  const found: Candidate[] = [];
  for (const [key, entry] of Object.entries(tools)) {
    if (!matchesTool(key, descriptor)) continue;
    found.push({
      specificity: isGlob(key) ? 3 : 4,
      // A `tools:` entry is more specific than a rule of the same class in the same scope.
      scopeRank: scope.rank + 0.5,
      detail: 0,
      literal: key.replace(/[*?]/g, '').length,
      decision: entry.decision,
      reason: entry.reason,
      ref: {
        kind: 'tool',
        scope: scope.scope,
        ...(scope.skill === undefined ? {} : { skill: scope.skill }),
        key,
        label: `${scope.prefix}tools[${JSON.stringify(key)}]`,
      },
    });
  }
  return found;
}

function modeVerdict(policy: Policy, capabilities: EffectiveCapabilities): PolicyVerdict {
  const rule: PolicyRuleRef = { kind: 'mode', scope: 'actor', label: `mode ${policy.mode}` };
  if (capabilities.readOnly) return { decision: 'allow', rule, reason: 'read-only tool' };
  switch (policy.mode) {
    case 'auto':
      return { decision: 'allow', rule, reason: 'auto mode runs every tool' };
    case 'ask':
      return { decision: 'ask', rule, reason: 'write-class tool needs approval in ask mode' };
    case 'read-only':
      return { decision: 'deny', rule, reason: 'only read-only tools run in read-only mode' };
  }
}

function allowedToolsEntryMatches(
  entry: string,
  descriptor: ToolDescriptor,
): { matches: boolean; hasArgs: boolean } {
  const open = entry.indexOf('(');
  const name = (open === -1 ? entry : entry.slice(0, open)).trim();
  if (name === '') return { matches: false, hasArgs: false };
  const matches =
    matchesTool(name, descriptor) ||
    (descriptor.originalName !== undefined && matchesGlob(name, descriptor.originalName));
  return { matches, hasArgs: open !== -1 };
}

/**
 * Decides whether one tool call may run: `allow`, `ask` (a human approves first) or `deny`.
 * Pure: it reads only the descriptor's id, name, capabilities and fingerprint, never its
 * description, so text from a server cannot talk its way into a looser verdict.
 *
 * Precedence: the most specific rule wins (exact tool id/name > tool glob > capability match >
 * mode default; a skill's refinement beats an actor-wide entry of the same kind; ties go to the
 * most restrictive). Then, whatever the rule said: `read-only` mode denies any tool that is not
 * read-only; `allowed-tools` of an active skill narrows; a tool that appeared at run time in
 * `ask` mode is at least `newTools`; a pinned tool whose fingerprint changed needs approval again.
 * These later steps only ever tighten a verdict.
 */
export function decide(
  descriptor: ToolDescriptor,
  policy: Policy,
  options: DecideOptions = {},
): PolicyVerdict {
  const capabilities = effectiveCapabilities(descriptor.capabilities);
  const candidates: Candidate[] = [];
  const actorScope = { scope: 'actor' as const, rank: 0, prefix: '' };
  policy.rules.forEach((rule, index) => {
    const candidate = ruleCandidate(rule, index, descriptor, capabilities, actorScope);
    if (candidate) candidates.push(candidate);
  });
  candidates.push(...toolCandidates(policy.tools, descriptor, actorScope));
  const skillPolicy = options.skill === undefined ? undefined : policy.skills[options.skill];
  if (skillPolicy !== undefined && options.skill !== undefined) {
    const skillScope = {
      scope: 'skill' as const,
      skill: options.skill,
      rank: 1,
      prefix: `skills.${options.skill}.`,
    };
    skillPolicy.rules.forEach((rule, index) => {
      const candidate = ruleCandidate(rule, index, descriptor, capabilities, skillScope);
      if (candidate) candidates.push(candidate);
    });
    candidates.push(...toolCandidates(skillPolicy.tools, descriptor, skillScope));
  }

  let verdict: PolicyVerdict;
  let best: Candidate | undefined;
  for (const candidate of candidates)
    if (best === undefined || compareCandidates(candidate, best) > 0) best = candidate;
  if (best !== undefined) {
    verdict = {
      decision: best.decision,
      rule: best.ref,
      reason: best.reason ?? `${best.ref.label} says ${best.decision}`,
    };
  } else {
    verdict = modeVerdict(policy, capabilities);
  }

  const tighten = (decision: PolicyDecision, rule: PolicyRuleRef, reason: string): void => {
    if (isStricter(decision, verdict.decision)) verdict = { decision, rule, reason };
  };

  if (policy.mode === 'read-only' && !capabilities.readOnly) {
    tighten(
      'deny',
      { kind: 'read-only', scope: 'actor', label: 'mode read-only' },
      'only read-only tools run in read-only mode, and this tool may write',
    );
  }

  if (options.activeSkillAllowedTools !== undefined) {
    let listed = false;
    let onlyWithArgs = true;
    for (const entry of options.activeSkillAllowedTools) {
      const { matches, hasArgs } = allowedToolsEntryMatches(entry, descriptor);
      if (!matches) continue;
      listed = true;
      if (!hasArgs) onlyWithArgs = false;
    }
    const rule: PolicyRuleRef = {
      kind: 'allowed-tools',
      scope: 'skill',
      label: 'allowed-tools of the active skill',
    };
    if (!listed) tighten('deny', rule, 'the active skill’s allowed-tools does not list this tool');
    else if (onlyWithArgs)
      tighten(
        'ask',
        rule,
        'allowed-tools lists this tool only with argument patterns, which need approval',
      );
  }

  if (
    options.addedAtRuntime === true &&
    policy.mode === 'ask' &&
    !(best !== undefined && best.specificity === 4)
  ) {
    tighten(
      policy.newTools,
      { kind: 'new-tool', scope: 'actor', label: 'newTools' },
      'this tool appeared at run time and has not been approved',
    );
  }

  const pin = options.pins?.get(descriptor.id);
  if (pin !== undefined && pin.fingerprint !== descriptor.fingerprint) {
    tighten(
      'ask',
      { kind: 'pin', scope: 'actor', label: `pin of ${descriptor.id}` },
      `the tool's definition changed since it was approved at ${pin.approvedAt} ` +
        `(pinned ${pin.fingerprint.slice(0, 12)}, now ${descriptor.fingerprint.slice(0, 12)})`,
    );
  }
  return verdict;
}
