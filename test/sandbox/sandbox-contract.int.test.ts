import { mkdir, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import {
  findThreadSandboxes,
  openThreadSandbox,
  removeThreadSandbox,
} from '../../src/actors/thread-sandbox.js';
import { SANDBOX_BACKENDS } from '../../src/sandbox/backends.js';
import { createSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { CONTRACT_FILES, sandboxContract } from '../../src/testing/index.js';
import type { SandboxContractFixture, SandboxContractOptions } from '../../src/testing/index.js';
import { describeContract } from '../helpers/describe-contract.js';
import { git, writeFiles } from './helpers.js';

/** The user's repo: the contract files and a symlink, committed, nothing else. */
async function makeRepoSource(scratch: string): Promise<string> {
  const repo = join(scratch, 'repo');
  await mkdir(repo);
  writeFiles(repo, CONTRACT_FILES);
  await symlink('README.md', join(repo, 'link'));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  return repo;
}

/** The sandbox contract from `/testing`, registered with vitest. */
function describeSandboxContract(
  name: string,
  makeSource: SandboxContractOptions['makeSource'],
  create: SandboxContractOptions['create'],
): void {
  describeContract(`sandbox contract: ${name}`, sandboxContract({ makeSource, create }));
}

/** A plain folder (no git) with the same files. */
async function makeFolderSource(scratch: string): Promise<string> {
  const folder = join(scratch, 'folder');
  await mkdir(folder);
  writeFiles(folder, CONTRACT_FILES);
  await symlink('README.md', join(folder, 'link'));
  return folder;
}

describeSandboxContract(
  'fresh run sandbox (git repo)',
  makeRepoSource,
  async ({ scratch, source }) => {
    const sandbox = await createSandbox({ source, baseDir: join(scratch, 'sandboxes') });
    return { sandbox, folders: [dirname(sandbox.runDir)] };
  },
);

describeSandboxContract('plain folder, no git', makeFolderSource, async ({ scratch, source }) => {
  const sandbox = await createSandbox({ source, baseDir: join(scratch, 'sandboxes') });
  expect(sandbox.kind).toBe('folder');
  return { sandbox, folders: [dirname(sandbox.runDir)] };
});

/** A thread's sandbox in a state folder of the scratch folder; removed with its record. */
async function threadSandbox(fixture: SandboxContractFixture, reopen: boolean) {
  const options = {
    workspaceRoot: join(fixture.scratch, 'workspace', '.agents'),
    stateDir: join(fixture.scratch, 'state'),
    actor: 'coder',
    threadId: 'contract thread',
    source: fixture.source,
    revision: 'HEAD',
  };
  let sandbox = await openThreadSandbox(options);
  if (reopen) {
    // Made, closed (kept) and opened again by a later "process": the same tree and store.
    await sandbox.close({ remove: false });
    sandbox = await openThreadSandbox(options);
    expect(sandbox.reopened).toBe(true);
  }
  const [location] = await findThreadSandboxes(options.workspaceRoot, options.threadId, {
    stateDir: options.stateDir,
  });
  return {
    sandbox,
    folders: [location!.dir],
    remove: async () => {
      await sandbox.close({ remove: false });
      await removeThreadSandbox(location!);
    },
  };
}

describeSandboxContract('thread sandbox', makeRepoSource, (fixture) =>
  threadSandbox(fixture, false),
);

describeSandboxContract('reopened thread sandbox', makeRepoSource, (fixture) =>
  threadSandbox(fixture, true),
);

/** The second backend: a plain copy, snapshots in memory, no git anywhere. */
async function memorySandbox({ scratch, source }: SandboxContractFixture) {
  const sandbox = await SANDBOX_BACKENDS.memory.create({
    source,
    baseDir: join(scratch, 'memory'),
  });
  expect(sandbox.backend).toBe('memory');
  expect(sandbox.store.git).toBeUndefined();
  return { sandbox, folders: [sandbox.container] };
}

describeSandboxContract('memory backend (git repo copied)', makeRepoSource, memorySandbox);

// Every backend of the table, made as the runtime makes it: a new entry is covered with no edit here.
for (const backend of Object.values(SANDBOX_BACKENDS)) {
  describeSandboxContract(
    `${backend.name} backend from the table (plain folder)`,
    makeFolderSource,
    async ({ scratch, source }) => {
      const sandbox = await backend.create({ source, baseDir: join(scratch, backend.name) });
      expect(sandbox.backend).toBe(backend.name);
      return { sandbox, folders: [sandbox.container] };
    },
  );
}

describeSandboxContract(
  'memory backend, closed (kept) and reopened',
  makeFolderSource,
  async (fixture) => {
    const made = await memorySandbox(fixture);
    await made.sandbox.close({ remove: false });
    const sandbox = await SANDBOX_BACKENDS.memory.open({ dir: made.sandbox.container });
    expect(sandbox.reopened).toBe(true);
    expect(await SANDBOX_BACKENDS.memory.list({ baseDir: fixture.scratch })).toEqual([
      { id: sandbox.id, dir: sandbox.container, source: fixture.source },
    ]);
    return { sandbox, folders: made.folders };
  },
);
