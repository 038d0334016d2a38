import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolCallRequest } from '../../src/core/tool-middleware.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';
import { createChangeTrackingMiddleware } from '../../src/pipeline/change-tracking.js';
import { createInFlightCalls } from '../../src/pipeline/in-flight.js';
import {
  createPathRewriteMiddleware,
  PATH_REFUSED_META_KEY,
} from '../../src/pipeline/path-rewrite.js';
import { createAuditLog } from '../../src/policy/audit-log.js';
import { createAuditMiddleware } from '../../src/policy/audit.js';
import { createOutputBudgetMiddleware } from '../../src/policy/output-budget.js';
import { createPolicyMiddleware } from '../../src/policy/policy-middleware.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import { createSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { createAllowedToolsMiddleware } from '../../src/skills/skill-allowed-tools.js';
import { describeToolMiddlewareContract } from '../contracts/tool-middleware.contract.js';
import type { ToolMiddlewareSubject } from '../contracts/tool-middleware.contract.js';
import { descriptor } from '../thread/helpers.js';

function request(tool: ToolDescriptor, args: Record<string, unknown>, signal: AbortSignal) {
  return (): ToolCallRequest => ({
    descriptor: tool,
    args: structuredClone(args),
    context: { signal, threadId: 'contract' },
  });
}

const reader = descriptor('read_thing', true, { path: { type: 'string' } });
const writer = descriptor('write_thing', false, { path: { type: 'string' } });

function plain(
  middleware: ToolMiddlewareSubject['middleware'],
): () => Promise<ToolMiddlewareSubject> {
  return () =>
    Promise.resolve({
      middleware,
      allowed: (signal) => request(reader, { path: 'a.txt' }, signal)(),
    });
}

/** A sandbox of a one-commit repo, for the layers that need one. */
async function withSandbox() {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-middleware-contract-')));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 'T');
  await writeFile(join(dir, 'a.txt'), 'a\n');
  git('add', 'a.txt');
  git('commit', '-q', '-m', 'init');
  const sandbox = await createSandbox({ source: dir, baseDir: join(dir, '..') });
  return {
    sandbox,
    close: async () => {
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describeToolMiddlewareContract('in-flight', plain(createInFlightCalls().middleware), {
  refuses: false,
});

describeToolMiddlewareContract(
  'audit',
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agents-audit-contract-'));
    const log = createAuditLog(join(dir, 'audit.jsonl'));
    return {
      middleware: createAuditMiddleware({ log, actor: 'contract' }),
      allowed: (signal) => request(reader, { path: 'a.txt' }, signal)(),
      close: async () => {
        await log.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
  { refuses: false },
);

describeToolMiddlewareContract(
  'allowed-tools',
  () =>
    Promise.resolve({
      middleware: createAllowedToolsMiddleware(() => ({
        name: 'readers',
        allowedTools: ['read_thing'],
      })),
      allowed: (signal) => request(reader, { path: 'a.txt' }, signal)(),
      refused: (signal) => request(writer, { path: 'a.txt' }, signal)(),
      refusalMetaKey: 'agents/policy',
    }),
  { refuses: true },
);

describeToolMiddlewareContract(
  'policy',
  () =>
    Promise.resolve({
      middleware: createPolicyMiddleware({
        policy: parsePolicy({ mode: 'read-only' }, 'the contract test'),
      }),
      allowed: (signal) => request(reader, { path: 'a.txt' }, signal)(),
      refused: (signal) => request(writer, { path: 'a.txt' }, signal)(),
      refusalMetaKey: 'agents/policy',
    }),
  { refuses: true },
);

describeToolMiddlewareContract('output budget', plain(createOutputBudgetMiddleware({})), {
  refuses: false,
});

describeToolMiddlewareContract(
  'path rewrite',
  async () => {
    const { sandbox, close } = await withSandbox();
    return {
      middleware: createPathRewriteMiddleware(sandbox.paths),
      allowed: (signal) => request(reader, { path: 'a.txt' }, signal)(),
      refused: (signal) => request(reader, { path: '../../outside.txt' }, signal)(),
      refusalMetaKey: PATH_REFUSED_META_KEY,
      close,
    };
  },
  { refuses: true },
);

describeToolMiddlewareContract(
  'change tracking',
  async () => {
    const { sandbox, close } = await withSandbox();
    return {
      middleware: createChangeTrackingMiddleware(sandbox),
      allowed: (signal) => request(writer, { path: 'a.txt' }, signal)(),
      close,
    };
  },
  { refuses: false },
);
