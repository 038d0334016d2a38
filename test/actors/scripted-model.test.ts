import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AIMessage } from '@langchain/core/messages';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resolveChatModel } from '../../src/actors/model.js';
import {
  ScriptedChatModel,
  createScriptedModel,
  parseModelScript,
} from '../../src/testing/index.js';

describe('scripted model', () => {
  it('replays the steps in order after each human message, deterministically', async () => {
    const model = await createScriptedModel({
      steps: [{ tool_calls: [{ name: 'read_file', args: { path: 'a' } }] }, { content: 'done' }],
    });
    const bound = model.bindTools([
      tool(async () => 'x', {
        name: 'read_file',
        description: 'r',
        schema: z.object({ path: z.string() }),
      }),
    ]);
    expect(model.boundToolNames).toEqual(['read_file']);
    const first = (await bound.invoke([new HumanMessage('go')])) as AIMessage;
    expect(first.tool_calls).toEqual([
      { id: 'call_0_0', name: 'read_file', args: { path: 'a' }, type: 'tool_call' },
    ]);
    const history = [
      new HumanMessage('go'),
      first,
      new ToolMessage({ content: 'x', tool_call_id: 'call_0_0' }),
    ];
    const second = (await bound.invoke(history)) as AIMessage;
    expect(second.content).toBe('done');
    expect(second.tool_calls).toEqual([]);
    const third = await model.invoke([...history, second]);
    expect(third.content).toBe('(script finished)');
    // A new human message starts the script again.
    const again = (await model.invoke([...history, second, new HumanMessage('more')])) as AIMessage;
    expect(again.tool_calls?.[0]?.name).toBe('read_file');
  });

  it('loads scripts from YAML, as a list or {steps}, and rejects malformed ones with positions', async () => {
    expect(parseModelScript('- content: hi\n')).toEqual([{ content: 'hi', tool_calls: [] }]);
    expect(parseModelScript('steps:\n  - tool_calls: [{name: x}]\n')[0]?.tool_calls[0]).toEqual({
      name: 'x',
      args: {},
    });
    expect(() => parseModelScript('- contnt: hi\n', 's.yaml')).toThrow(/s\.yaml:1:3/);
    // A typo in one step names the step and the field, not zod's "Invalid input" for the union.
    const typo = () =>
      parseModelScript('- content: a\n- tool_calls: [{ name: x, arg: { p: 1 } }]\n', 'typo.yaml');
    expect(typo).toThrow('typo.yaml:2:27: [1].tool_calls[0]: unknown field "arg"');
    expect(typo).not.toThrow(/Invalid input/);
    expect(() => parseModelScript('steps:\n  - tool_calls: x\n', 'o.yaml')).toThrow(
      'o.yaml:2:17: steps[0].tool_calls: expected array, got string "x"',
    );
    const dir = await mkdtemp(join(tmpdir(), 'agents-script-'));
    try {
      await writeFile(join(dir, 's.yaml'), '- content: from file\n');
      const model = await resolveChatModel('scripted:s.yaml', {
        resolvePath: (path) => join(dir, path),
      });
      expect(model).toBeInstanceOf(ScriptedChatModel);
      expect((await model.invoke([new HumanMessage('x')])).content).toBe('from file');
      await expect(
        resolveChatModel('scripted:none.yaml', { resolvePath: (path) => join(dir, path) }),
      ).rejects.toMatchObject({ code: 'CONFIG_NOT_FOUND' });
      await expect(resolveChatModel('gpt4', { resolvePath: (path) => path })).rejects.toMatchObject(
        { code: 'CONFIG_INVALID' },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names the provider package to install when a provider model cannot be made', async () => {
    // `langchain` is installed here (a dev dependency); the OpenAI provider package is not.
    const error = await resolveChatModel('openai:gpt-4.1-mini', {
      resolvePath: (path) => path,
    }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((error as Error).message).toContain('Cannot create model "openai:gpt-4.1-mini"');
    expect((error as Error).message).toContain('npm install @langchain/openai');
  });
});
