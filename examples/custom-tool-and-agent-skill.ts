/**
 * One skill bundling three kinds of tools: built-in file tools, a custom LangChain tool
 * (`examples/custom-tools/word-count.ts`) and an Agent Skill (a folder with a `SKILL.md`,
 * `examples/agent-skills/release-notes/`). The model activates the Agent Skill, which loads its
 * instructions and limits the tools to its `allowed-tools` until another skill is activated.
 *
 *   npx tsx examples/custom-tool-and-agent-skill.ts
 *
 * Exits non-zero unless the skill's instructions load, the custom tool runs, and a write outside
 * `allowed-tools` is refused (and nothing is written).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor } from '../src/index.js';
import { createWorkspaceStore } from '../src/entries/actors.js';
import type { ActorRunEvent } from '../src/index.js';
import { createScriptedModel } from '../src/testing/index.js';
import { check, makeGitRepo } from './support/helpers.js';

const CUSTOM_TOOLS = fileURLToPath(new URL('./custom-tools/word-count.ts', import.meta.url));
const AGENT_SKILL = fileURLToPath(new URL('./agent-skills/release-notes', import.meta.url));

const temp = await realpath(await mkdtemp(join(tmpdir(), 'agents-skill-')));
try {
  const project = join(temp, 'project');
  makeGitRepo(project, { 'CHANGES.md': '- greet() takes a name\n- faster startup\n' });
  const store = createWorkspaceStore(join(temp, '.agents'));
  await store.put('skill', 'writer', {
    description: 'Writes release notes.',
    tools: ['read_file', 'write_file', `custom:${CUSTOM_TOOLS}#wordCount`],
    agentSkills: [AGENT_SKILL],
  });

  const notes = "## What's new\n- greet() takes a name\n- faster startup\n";
  const model = await createScriptedModel({
    steps: [
      { tool_calls: [{ name: 'activate_skill', args: { skill: 'release-notes' } }] },
      { tool_calls: [{ name: 'read_file', args: { path: 'CHANGES.md' } }] },
      { tool_calls: [{ name: 'word_count', args: { text: notes } }] },
      // Not in the Agent Skill's allowed-tools: refused while it is active.
      { tool_calls: [{ name: 'write_file', args: { path: 'RELEASE.md', content: notes } }] },
      { content: notes },
    ],
  });
  await using actor = await createActor({
    config: {
      name: 'notes',
      skills: ['writer'],
      sandbox: { source: project },
      checkpointer: { type: 'memory' },
    },
    workspace: store,
    model,
    sandboxBaseDir: temp,
  });
  await actor.activate();
  for (const entry of actor.entries()) {
    const { descriptor } = entry;
    console.log(
      `tool ${descriptor.id.padEnd(22)} ${descriptor.capabilities.readOnly.value ? 'read ' : 'write'} (${descriptor.capabilities.readOnly.reason})`,
    );
  }

  const ends: Extract<ActorRunEvent, { type: 'tool-call-end' }>[] = [];
  for await (const event of actor.run('Draft release notes.', { threadId: 'notes' })) {
    if (event.type === 'tool-call-end') {
      ends.push(event);
      console.log(
        `${event.name}${event.isError ? ' (refused)' : ''}: ${event.text.split('\n')[0]}`,
      );
    } else if (event.type === 'message') {
      console.log(`answer:\n${event.text}`);
    }
  }

  const [activation, read, count, write] = ends;
  check(
    activation?.text.includes('<skill name="release-notes">') === true,
    'the Agent Skill did not load its instructions',
  );
  check(
    activation.text.includes('references/template.md'),
    'the Agent Skill did not list its files',
  );
  check(read?.text.includes('greet() takes a name') === true && !read.isError, 'read_file failed');
  check(count?.text === '11 words, 3 lines', `word_count returned ${count?.text}`);
  check(
    write?.isError === true && write.text.includes('allowed-tools'),
    'write_file was not refused by allowed-tools',
  );
  check(
    !existsSync(join(actor.sandbox?.root ?? project, 'RELEASE.md')),
    'the refused write happened anyway',
  );
  console.log('custom tool and agent skill ok');
} finally {
  await rm(temp, { recursive: true, force: true });
}
