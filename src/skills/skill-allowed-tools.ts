import type { ToolCallHandler, ToolCallRequest, ToolMiddleware } from '../core/tool-middleware.js';
import type { ToolDescriptor } from '../core/tool-descriptor.js';
import { ResultMetaKey } from '../core/tool-descriptor.js';
import { matchesGlob } from '../core/glob.js';
import { textResult } from './local-descriptor.js';
import { ACTIVATE_SKILL_TOOL_ID, type SkillActivation } from './skill-activation.js';

/**
 * Enforces `allowed-tools` while an Agent Skill is active in the call's thread: other tools get
 * an error result the model sees (with an `agents/policy` record in `_meta`), not a thrown
 * error. The activation tool itself is always allowed, so the model can switch skills.
 * Entries match a tool's name, original name or id, case-insensitively, with the library's
 * globs (`core/glob.ts`: `*` any run, `?` one character); an argument pattern such as
 * `Bash(git:*)` matches on the part before `(`.
 */
export function createAllowedToolsMiddleware(
  source: SkillActivation | ActiveSkillLookup,
): ToolMiddleware {
  const lookup: ActiveSkillLookup =
    typeof source === 'function' ? source : (request) => source.get(request.context.threadId);
  return {
    name: 'allowed-tools',
    async wrap(request, next: ToolCallHandler) {
      const skill = lookup(request);
      if (!skill?.allowedTools || request.descriptor.id === ACTIVATE_SKILL_TOOL_ID)
        return next(request);
      if (isToolAllowed(request.descriptor, skill.allowedTools)) return next(request);
      const reason =
        `Tool "${request.descriptor.name}" is not allowed while skill "${skill.name}" is active ` +
        `(allowed-tools: ${skill.allowedTools.join(', ') || 'none'}). Use one of those tools, or activate another skill.`;
      return {
        ...textResult(reason, true),
        _meta: {
          [ResultMetaKey.Policy]: {
            decision: 'deny',
            rule: 'allowed-tools',
            skill: skill.name,
            reason,
          },
        },
      };
    },
  };
}

/** The active skill of a call's thread (name and `allowed-tools`), or undefined for none. */
export type ActiveSkillLookup = (
  request: ToolCallRequest,
) => { name: string; allowedTools?: readonly string[] | undefined } | undefined;

/** True when `descriptor` matches one of the `allowed-tools` entries. */
export function isToolAllowed(
  descriptor: ToolDescriptor,
  allowedTools: readonly string[],
): boolean {
  const candidates = [descriptor.name, descriptor.originalName, descriptor.id];
  return allowedTools.some((entry) => {
    // An argument pattern (`Bash(git:*)`) matches on the tool part; names in any case.
    const pattern = entry.replace(/\(.*\)$/, '').trim();
    return (
      pattern !== '' &&
      candidates.some((candidate) => matchesGlob(pattern, candidate, { ignoreCase: true }))
    );
  });
}
