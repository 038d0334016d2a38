import { AIMessage, type ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentsError, AgentsErrorCode } from '../../src/errors.js';
import { createTrackedToolNode } from '../../src/pipeline/tool-node.js';

const failing = (code: AgentsErrorCode, message: string) =>
  tool(
    () => {
      throw new AgentsError(code, message);
    },
    { name: `fails_${code.toLowerCase()}`, description: 'fails', schema: z.object({}) },
  );

async function callOnce(code: AgentsErrorCode, message: string): Promise<ToolMessage> {
  const node = createTrackedToolNode([failing(code, message)]);
  const call = {
    name: `fails_${code.toLowerCase()}`,
    args: {},
    id: 'c1',
    type: 'tool_call' as const,
  };
  const output = (await node.invoke({
    messages: [new AIMessage({ content: '', tool_calls: [call] })],
  })) as {
    messages: ToolMessage[];
  };
  return output.messages[0]!;
}

describe('tool errors reach the model as what they are (#26)', () => {
  it('a crashed server or a timeout is not called the model`s mistake', async () => {
    for (const code of [AgentsErrorCode.ServerUnavailable, AgentsErrorCode.Timeout]) {
      const message = await callOnce(code, 'server "fs" exited with code 1');
      expect(message.status).toBe('error');
      expect(message.content as string).toContain('server "fs" exited with code 1');
      expect(message.content as string).not.toContain('Please fix your mistakes');
      expect(message.content as string).toContain('not of your call');
    }
  });

  it('a mistake of the call keeps ToolNode`s wording', async () => {
    const message = await callOnce(AgentsErrorCode.InvalidArguments, 'path must be a string');
    expect(message.content as string).toBe(
      'Error: path must be a string\n Please fix your mistakes.',
    );
  });

  it('a login step-up is never sent to the model: the step fails with AUTH_REQUIRED', async () => {
    await expect(
      callOnce(
        AgentsErrorCode.AuthRequired,
        'run `agents server login tracker --scope "write"` in a terminal, then retry.',
      ),
    ).rejects.toSatisfy((error: unknown) =>
      AgentsError.hasCode(error, AgentsErrorCode.AuthRequired),
    );
  });
});
