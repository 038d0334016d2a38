import { z } from 'zod';
import { HOST_PATTERN } from './network-schema.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';

/** What a policy can decide for one tool call. Ordered from least to most restrictive. */
export const PolicyDecisionSchema = z
  .enum(['allow', 'ask', 'deny'])
  .describe('`allow` runs the call, `ask` pauses for a human, `deny` returns an error result.');
export type PolicyDecision = z.infer<typeof PolicyDecisionSchema>;

/** The policy mode: the default for tools no rule matches. */
export const PolicyModeSchema = z
  .enum(['read-only', 'ask', 'auto'])
  .describe(
    '`read-only`: only read-only tools run (a ceiling no rule can lift); `ask`: write-class tools ' +
      'need approval; `auto`: everything runs unless a rule says otherwise.',
  );
export type PolicyMode = z.infer<typeof PolicyModeSchema>;

/** What a rule matches: a tool id/name glob and/or capability verdicts. */
export const PolicyMatchSchema = z
  .strictObject({
    tool: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Tool id (`mcp:fs/write_file`) or model-facing name; `*` matches any run of characters, ' +
          '`?` one character. Without `*`/`?` it must match exactly.',
      ),
    writes: z.boolean().optional().describe('Match tools whose `writes` verdict equals this.'),
    destructive: z
      .boolean()
      .optional()
      .describe('Match tools whose `destructive` verdict equals this.'),
    openWorld: z
      .boolean()
      .optional()
      .describe('Match tools whose `openWorld` verdict equals this.'),
    readOnly: z.boolean().optional().describe('Match tools whose `readOnly` verdict equals this.'),
  })
  .refine((match) => Object.values(match).some((value) => value !== undefined), {
    message: 'A rule must match on at least one of tool, writes, destructive, openWorld, readOnly.',
  })
  .describe('Which tools a rule applies to; every given field must match.');
export type PolicyMatch = z.infer<typeof PolicyMatchSchema>;

/** One policy rule. */
export const PolicyRuleSchema = z
  .strictObject({
    match: PolicyMatchSchema,
    decision: PolicyDecisionSchema,
    reason: z.string().optional().describe('Shown to the model on deny and to the human on ask.'),
  })
  .describe('A rule: the most specific matching rule wins; ties go to the most restrictive.');
export type PolicyRule = z.infer<typeof PolicyRuleSchema>;

/** A decision fixed for one tool, keyed by tool id or name in `tools`. */
export const ToolPolicySchema = z
  .strictObject({
    decision: PolicyDecisionSchema,
    reason: z.string().optional(),
  })
  .describe('The decision for one tool (most specific of all).');
export type ToolPolicy = z.infer<typeof ToolPolicySchema>;

/** Refinements that apply only to tools coming from one skill. */
export const SkillPolicySchema = z
  .strictObject({
    rules: z.array(PolicyRuleSchema).default([]).describe('Rules for tools of this skill.'),
    tools: z
      .record(z.string(), ToolPolicySchema)
      .default({})
      .describe('Per-tool decisions for tools of this skill, keyed by tool id or name.'),
  })
  .describe('Policy refinements for the tools of one skill.');
export type SkillPolicy = z.infer<typeof SkillPolicySchema>;

/** What upstream servers may ask of the MCP client behind a served call, or in a graph run. */
export const ClientRequestPolicySchema = z
  .strictObject({
    sampling: z
      .enum(['allow', 'ask', 'model', 'deny'])
      .default('allow')
      .describe(
        "A server's sampling/createMessage (a completion it wants written). Under `agents serve` " +
          'every value but `deny` forwards it to the MCP client. In a graph run (MCP 2026-07-28 ' +
          'servers): `allow` (the default) and `ask` pause the run so a person writes the ' +
          "completion; `model` has the actor's own chat model write it (text only, no tools; a " +
          'person when there is no model); `deny` refuses it and does not declare sampling. ' +
          'The tool runs once in every case, after the answer.',
      ),
    elicitation: z
      .enum(['allow', 'deny'])
      .default('allow')
      .describe(
        "`deny` refuses an upstream server's elicitation/create (a question to the MCP client's " +
          'user, or to a person in a graph run).',
      ),
  })
  .describe(
    'Requests the upstream MCP servers make of their client while one of their tools runs: ' +
      'forwarded to the MCP client that made the call under `agents serve`, put to a person (or ' +
      "the actor's model) in a graph run. Only calls the policy let run can make them; each is " +
      'audited.',
  );
export type ClientRequestPolicy = z.infer<typeof ClientRequestPolicySchema>;

/**
 * A network rule: what happens when a confined server (or the library, for a remote server)
 * connects to a host that is on neither of the server's `network` lists. Without a matching
 * rule such a host is refused, as before.
 */
export const NetworkPolicyRuleSchema = z
  .strictObject({
    host: z
      .string()
      .refine((value) => value === '*' || HOST_PATTERN.test(value), {
        message:
          'must be `*` (any host), a host name, a `*.` wildcard or an IP literal, with an optional `:port`',
      })
      .describe(
        'Host pattern as in `sandbox.network` (`api.example.com`, `*.example.com`, an IP literal, optional `:port`), or `*` for any host.',
      ),
    decision: PolicyDecisionSchema.describe(
      '`allow` connects, `deny` refuses, `ask` refuses this time and pauses the run for a human; an approval pins the host for that server and the call runs again.',
    ),
    reason: z.string().optional().describe('Shown to the human on ask.'),
  })
  .describe(
    'A network rule for hosts on no list: the most specific matching pattern wins (host and port > host > longer wildcard > `*`); ties go to the most restrictive.',
  );
export type NetworkPolicyRule = z.infer<typeof NetworkPolicyRuleSchema>;

/**
 * An actor's safety policy (the `policy:` key of an actor YAML file).
 * Parse it with `PolicySchema.parse(actor.policy ?? {})`.
 */
export const PolicySchema = z
  .strictObject({
    mode: PolicyModeSchema.default('ask'),
    rules: z.array(PolicyRuleSchema).default([]).describe('Actor-wide rules.'),
    tools: z
      .record(z.string(), ToolPolicySchema)
      .default({})
      .describe('Per-tool decisions keyed by tool id (`mcp:fs/write_file`) or name.'),
    skills: z
      .record(z.string(), SkillPolicySchema)
      .default({})
      .describe('Per-skill refinements keyed by skill name.'),
    newTools: PolicyDecisionSchema.default('ask').describe(
      'Decision for tools that appear at run time (tools/list_changed) in `ask` mode and have no ' +
        'exact rule; never looser than the mode allows.',
    ),
    clientRequests: ClientRequestPolicySchema.default({ sampling: 'allow', elicitation: 'allow' }),
    network: z
      .array(NetworkPolicyRuleSchema)
      .default([])
      .describe(
        'Rules for connections to hosts on no `sandbox.network` list of the server (servers with host lists only): allow, deny or ask per host pattern.',
      ),
  })
  .describe('Safety policy: which tool calls run, which need approval, which are refused.');
/** A parsed policy (defaults filled in). */
export type Policy = z.infer<typeof PolicySchema>;
/** A policy as written in YAML (defaults optional). */
export type PolicyInput = z.input<typeof PolicySchema>;

/**
 * Parses a policy written by a user (an actor's `policy:` value).
 * Throws `CONFIG_INVALID` naming `source` (a file path or label) with zod's readable report.
 */
export function parsePolicy(value: unknown, source = 'policy'): Policy {
  const parsed = PolicySchema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  throw new AgentsError(
    AgentsErrorCode.ConfigInvalid,
    `Invalid policy in ${source}:\n${z.prettifyError(parsed.error)}\nFix the policy block and try again.`,
    { cause: parsed.error, details: { source } },
  );
}
