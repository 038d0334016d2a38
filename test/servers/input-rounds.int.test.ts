/**
 * A 2026-07-28 server's multi-round-trip questions (`input_required`) through the managed
 * server when the call brings an answerer (as graph runs do): elicitation goes to it with the
 * round's requestState, roots are answered from the configured root (the sandbox), sampling is
 * not offered to an answerer that does not declare it (`offersSampling`), a refusal ends the
 * call before the tool runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import {
  describeInputHandler,
  type InputQuestionOutcome,
  type InputRequestRound,
} from '../../src/core/input-requests.js';
import { PolicySchema } from '../../src/config/policy-schema.js';
import { gateInputRequests } from '../../src/policy/input-gate.js';
import { samplingResult } from '../../src/policy/sampling-request.js';
import { AgentsError } from '../../src/errors.js';
import { refusingInputHandler } from '../../src/policy/input-requests.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import { modernStdioArgs } from '../fixtures/fixture-process.js';
import { FAST_TIMEOUTS, resultText } from './fixture.js';

describe('input_required rounds on a 2026-07-28 server', () => {
  let root: string;
  let server: ManagedServer;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'agents-rounds-sandbox-'));
    const config = {
      name: 'modern',
      transport: 'stdio',
      command: process.execPath,
      args: modernStdioArgs(),
      trusted: true,
      timeouts: { ...FAST_TIMEOUTS, startupMs: 30_000 },
    } as NamedServerConfig;
    server = createManagedServer(config, { runDir: null, roots: () => [root] });
    await server.start();
  }, 60_000);
  afterAll(async () => {
    await server.close();
    await rm(root, { recursive: true, force: true });
  });

  it('puts an elicitation to the answerer with its requestState and retries with the answer', async () => {
    const rounds: InputRequestRound[] = [];
    const result = await server.callTool(
      'confirm_write',
      { path: 'x.txt' },
      {},
      {
        inputRequests: (round) => {
          rounds.push(round);
          return {
            responses: { confirm: { action: 'accept', content: { confirm: true } } },
            ...(round.requestState === undefined ? {} : { requestState: round.requestState }),
          };
        },
      },
    );
    expect(resultText(result)).toBe('wrote x.txt');
    expect(rounds).toHaveLength(1);
    expect(rounds[0]).toMatchObject({
      serverName: 'modern',
      toolName: 'confirm_write',
      round: 1,
      requestState: JSON.stringify({ path: 'x.txt' }),
      questions: { confirm: { method: 'elicitation/create' } },
    });
  });

  it('answers roots with the sandbox root as a file:// URI, without asking anyone', async () => {
    const result = await server.callTool(
      'roots_seen',
      {},
      {},
      {
        inputRequests: () => {
          throw new Error('roots must not be put to a person');
        },
      },
    );
    expect(resultText(result)).toBe(pathToFileURL(root).href);
  });

  it('does not offer sampling: the call fails with an error naming it, never asking anyone', async () => {
    let asked = false;
    const outcome = await server
      .callTool(
        'ask_model',
        {},
        {},
        {
          inputRequests: () => {
            asked = true;
            return { responses: {} };
          },
        },
      )
      .then(
        (result) => resultText(result),
        (error: unknown) => (AgentsError.isInstance(error) ? error.message : String(error)),
      );
    expect(asked).toBe(false);
    expect(outcome).toMatch(/sampling/);
  });

  it('a refused question ends the call with an error result, and the tool never runs', async () => {
    const result = await server.callTool(
      'confirm_write',
      { path: 'y.txt' },
      {},
      { inputRequests: refusingInputHandler('actor "a"', 'confirm_write') },
    );
    expect(result.isError).toBe(true);
    expect(resultText(result)).toContain('clientRequests.elicitation is deny');
    expect(resultText(result)).not.toContain('wrote');
  });

  it('puts sampling to an answerer that offers it, and tells the observer who answered', async () => {
    const seen: InputQuestionOutcome[] = [];
    const result = await server.callTool(
      'sampled_note',
      { topic: 'rounds' },
      {},
      {
        inputRequests: describeInputHandler(
          (round) => ({
            responses: { note: samplingResult('short note', 'test-model') },
            ...(round.requestState === undefined ? {} : { requestState: round.requestState }),
            sources: { note: { by: 'model', name: 'test-model' } },
          }),
          { offersSampling: true },
        ),
        inputObserver: (outcome) => seen.push(outcome),
      },
    );
    expect(resultText(result)).toBe(
      'noted short note (role assistant, model test-model, stop endTurn, state ok)',
    );
    expect(seen).toEqual([
      expect.objectContaining({
        method: 'sampling/createMessage',
        key: 'note',
        outcome: 'answered',
        source: { by: 'model', name: 'test-model' },
        model: 'test-model',
        summary: expect.objectContaining({ messages: 1, maxTokens: 50 }),
      }),
    ]);
  });

  it('sampling: deny withholds the capability and ends the call naming the policy key', async () => {
    const seen: InputQuestionOutcome[] = [];
    const person = describeInputHandler(
      () => {
        throw new Error('nobody may be asked');
      },
      { offersSampling: true },
    );
    const gated = gateInputRequests(person, {
      policyName: 'actor "a"',
      toolName: 'sampled_note',
      rules: PolicySchema.parse({ clientRequests: { sampling: 'deny' } }).clientRequests,
    });
    expect(gated.offersSampling).toBe(false);
    const result = await server.callTool(
      'sampled_note',
      { topic: 'denied' },
      {},
      { inputRequests: gated, inputObserver: (outcome) => seen.push(outcome) },
    );
    expect(result.isError).toBe(true);
    expect(resultText(result)).toBe(
      'Refused by actor "a": server "modern" asked for sampling (a completion from this ' +
        'client\'s model) before running tool "sampled_note", and clientRequests.sampling is ' +
        'deny; the tool did not run.',
    );
    expect(seen).toEqual([
      expect.objectContaining({ outcome: 'refused', source: { by: 'policy' } }),
    ]);
  });
});
