import { readFile, realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ACTIVE_SKILL_META_KEY } from '../core/sandbox-state.js';
import { isInside } from '../sandbox/source-dir.js';
import type { ToolEntry, ToolResult } from '../core/tool-descriptor.js';
import type { AgentSkill } from './agent-skills.js';
import { createLocalDescriptor, textResult } from './local-descriptor.js';

/**
 * Which Agent Skill is active, per thread. One instance per actor; the activation tool sets it
 * and {@link createAllowedToolsMiddleware} reads it.
 */
export interface SkillActivation {
  /** The active skill of a thread (threads without an id share the `''` slot). */
  get(threadId?: string): AgentSkill | undefined;
  set(threadId: string | undefined, skill: AgentSkill): void;
  clear(threadId?: string): void;
}

/** Creates an empty {@link SkillActivation}. */
export function createSkillActivation(): SkillActivation {
  const active = new Map<string, AgentSkill>();
  return {
    get: (threadId) => active.get(threadId ?? ''),
    set: (threadId, skill) => void active.set(threadId ?? '', skill),
    clear: (threadId) => void active.delete(threadId ?? ''),
  };
}

/** The stable id and default name of the activation tool. */
export const ACTIVATE_SKILL_TOOL_ID = 'skill:activate';
export const ACTIVATE_SKILL_TOOL_NAME = 'activate_skill';

const MAX_RESOURCE_BYTES = 256_000;

/**
 * The progressive-disclosure tool for a set of Agent Skills (`source: 'agent-skill'`,
 * id `skill:activate`, name `activate_skill`). The model sees every skill's name and
 * description in the tool description, and the `skill` argument is an enum of the names.
 * Activating returns the instructions and the skill's file list and records the skill as
 * active for the thread (which {@link createAllowedToolsMiddleware} enforces); calling it with
 * `file` returns one of those files, read only from inside the skill folder (realpath-checked).
 * Returns undefined when there are no skills.
 */
export function createAgentSkillTool(
  skills: readonly AgentSkill[],
  activation: SkillActivation,
): ToolEntry | undefined {
  if (skills.length === 0) return undefined;
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  const names = [...byName.keys()];
  const catalogue = skills.map((skill) => `- ${skill.name}: ${skill.description}`).join('\n');
  const descriptor = createLocalDescriptor({
    id: ACTIVATE_SKILL_TOOL_ID,
    name: ACTIVATE_SKILL_TOOL_NAME,
    source: 'agent-skill',
    description:
      'Activate an Agent Skill to load its instructions before doing a task it covers. ' +
      'Call again with `file` to read one of the files it lists.\nAvailable skills:\n' +
      catalogue,
    inputSchema: {
      type: 'object',
      properties: {
        skill: { type: 'string', enum: names, description: 'The skill to activate.' },
        file: {
          type: 'string',
          description: 'Optional: a file of the skill to read (as listed on activation).',
        },
      },
      required: ['skill'],
      additionalProperties: false,
    },
    capabilities: { readOnly: true },
    capabilitySource: 'default',
    capabilityReason: 'Agent Skill activation only reads the skill folder',
  });
  return {
    descriptor,
    async execute(args, context): Promise<ToolResult> {
      const skill = typeof args['skill'] === 'string' ? byName.get(args['skill']) : undefined;
      if (!skill) {
        return textResult(
          `Unknown skill ${JSON.stringify(args['skill'])}; choose one of: ${names.join(', ')}.`,
          true,
        );
      }
      const file = args['file'];
      if (typeof file === 'string' && file !== '') return readSkillFile(skill, file);
      const alreadyActive = activation.get(context.threadId)?.name === skill.name;
      activation.set(context.threadId, skill);
      const files =
        skill.files.length === 0 ? '(none)' : skill.files.map((item) => `- ${item}`).join('\n');
      const allowed = skill.allowedTools
        ? `\nWhile this skill is active you may only use: ${skill.allowedTools.join(', ')}.`
        : '';
      const text = alreadyActive
        ? `Skill "${skill.name}" is already active; its instructions were given earlier in this conversation.`
        : `<skill name="${skill.name}">\n${skill.instructions}\n</skill>\n\nFiles of this skill (read with ${ACTIVATE_SKILL_TOOL_NAME} skill="${skill.name}" file="..."):\n${files}${allowed}`;
      return {
        content: [{ type: 'text', text }],
        structuredContent: {
          skill: skill.name,
          files: skill.files,
          allowedTools: skill.allowedTools ?? null,
        },
        // The tracked ToolNode moves this into the thread's checkpointed `activeSkill` state.
        _meta: {
          [ACTIVE_SKILL_META_KEY]: { name: skill.name, allowedTools: skill.allowedTools ?? null },
        },
      };
    },
  };
}

async function readSkillFile(skill: AgentSkill, file: string): Promise<ToolResult> {
  const target = resolve(skill.dir, file);
  const real = await realpath(target).catch(() => undefined);
  if (real === undefined || !isInside(real, skill.dir)) {
    return textResult(
      `File "${file}" is not part of skill "${skill.name}"; use a path from its file list.`,
      true,
    );
  }
  const info = await stat(real);
  if (!info.isFile()) return textResult(`"${file}" in skill "${skill.name}" is not a file.`, true);
  if (info.size > MAX_RESOURCE_BYTES) {
    return textResult(
      `"${file}" is ${info.size} bytes, over the ${MAX_RESOURCE_BYTES}-byte limit for skill files.`,
      true,
    );
  }
  return textResult(await readFile(real, 'utf8'));
}
