import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import type { ActorInstance, ActorRunEvent } from '../../src/actors/actor-types.js';
import { AgentsError } from '../../src/errors.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { isProcessGroupAlive } from '../../src/servers/process-group.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';
import { hashTree } from '../sandbox/helpers.js';

const HOSTILE_SERVER = join(import.meta.dirname, '..', 'fixtures', 'hostile-server.mjs');
// Where bubblewrap works (Linux with it installed: `.ci/run` installs it) the confined
// assertions run; AGENTS_REQUIRE_CONFINEMENT=1 turns a missing bubblewrap into a failure.
const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

/**
 * A project (git repo, one commit, an uncommitted edit in keep.txt) with a canary folder beside
 * it and one in the home folder; the actor's server is the hostile fixture.
 */
describe('OS confinement of stdio servers (hostile server, real processes)', () => {
  let scratch: string;
  let project: string;
  let canary: string;
  let homeCanary: string;
  let sandboxBase: string;
  let store: WorkspaceStore;

  beforeEach(async () => {
    scratch = await realpath(await mkdtemp(join(tmpdir(), 'agents-confine-')));
    project = join(scratch, 'project');
    canary = join(scratch, 'canary');
    homeCanary = await mkdtemp(join(homedir(), '.agents-confine-canary-'));
    sandboxBase = join(scratch, 'sandboxes');
    await mkdir(project);
    await mkdir(canary);
    await mkdir(sandboxBase);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('config', 'user.email', 't@example.com');
    git('config', 'user.name', 'T');
    await writeFile(join(project, 'keep.txt'), 'committed\n');
    await writeFile(join(project, 'other.txt'), 'other\n');
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    // The only copy of this edit: whatever a tool does, it must survive.
    await writeFile(join(project, 'keep.txt'), 'committed\nuncommitted edit\n');
    await writeFile(join(canary, 'canary.txt'), 'canary\n');
    await writeFile(join(homeCanary, 'canary.txt'), 'home canary\n');
    store = createWorkspaceStore(join(project, '.agents'));
    await store.put('server', 'hostile', {
      transport: 'stdio',
      command: process.execPath,
      args: [HOSTILE_SERVER],
      // spawn_writer's `path` stands for an argument rewriting cannot recognise: the server
      // gets it as written, so only the OS can stop it.
      overrides: { spawn_writer: { pathArguments: [] } },
    });
    await store.put('skill', 'hostile', { mcpServers: ['hostile'] });
  });

  afterEach(async () => {
    await rm(scratch, { recursive: true, force: true });
    await rm(homeCanary, { recursive: true, force: true });
  });

  /** The user's side: project tree (without the workspace), canaries. */
  function userState() {
    return {
      project: hashTree(project, ['.agents', '.git']),
      canary: hashTree(canary),
      home: hashTree(homeCanary),
    };
  }

  async function actorWith(
    name: string,
    calls: Array<{ name: string; args: Record<string, unknown> }>,
    sandbox: Record<string, unknown> = {},
    options: Parameters<typeof createActor>[0] = {},
  ): Promise<ActorInstance> {
    const script = [...calls.map((call) => ({ tool_calls: [call] })), { content: 'done' }];
    await writeFile(join(scratch, `${name}.json`), JSON.stringify(script));
    await store.put('actor', name, {
      skills: ['hostile'],
      model: `scripted:${join(scratch, `${name}.json`)}`,
      policy: { mode: 'auto' },
      checkpointer: { type: 'memory' },
      sandbox,
    });
    return createActor({
      name,
      workspace: store,
      sandboxBaseDir: sandboxBase,
      auditFile: join(scratch, `${name}.audit.jsonl`),
      ...options,
    });
  }

  async function ends(actor: ActorInstance): Promise<Array<{ name: string; text: string }>> {
    const out: Array<{ name: string; text: string }> = [];
    for await (const event of actor.run('go') as AsyncGenerator<ActorRunEvent>) {
      if (event.type === 'tool-call-end') out.push({ name: event.name, text: event.text });
    }
    return out;
  }

  /** Calls that write outside the sandbox by every route rewriting cannot see. */
  function hostileCalls() {
    // Enough "../" to reach "/" from any sandbox, then down to the project: keep.txt.
    const upToProject = `${'../'.repeat(40)}${project.slice(1)}/keep.txt`;
    return [
      { name: 'move', args: { from: 'other.txt', to: upToProject } },
      { name: 'spawn_writer', args: { path: join(project, 'keep.txt'), content: 'pwned' } },
      { name: 'spawn_writer', args: { path: join(canary, 'new.txt'), content: 'pwned' } },
      { name: 'spawn_writer', args: { path: join(canary, 'canary.txt'), content: 'pwned' } },
      { name: 'spawn_writer', args: { path: join(homeCanary, 'new.txt'), content: 'pwned' } },
    ];
  }

  it(
    'confine auto (bubblewrap here): writes outside the sandbox fail or land in the sandbox; the project and canaries stay byte-identical',
    { timeout: 120_000 },
    async () => {
      const warnings: string[] = [];
      const literal = '../../../../../../keep.txt';
      await using actor = await actorWith(
        'confined',
        [
          { name: 'move', args: { from: 'other.txt', to: literal } },
          ...hostileCalls(),
          // The sandbox's own repository reads the user's objects (alternates), under the
          // project path where the sandbox is mounted too: they must stay reachable.
          { name: 'git', args: { argv: 'cat-file -p HEAD:keep.txt' } },
          { name: 'git', args: { argv: 'log --format=%s -1' } },
        ],
        {},
        { onWarning: (message) => warnings.push(message) },
      );
      const before = userState();
      await actor.activate();
      if (!BUBBLEWRAP.available) {
        // No bubblewrap: auto runs unconfined and says why, once.
        expect(MUST_CONFINE).toBe(false);
        expect(actor.confinement?.kind).toBe('none');
        expect(warnings.join('\n')).toMatch(/WITHOUT OS confinement/);
        return;
      }
      expect(actor.confinement).toEqual({ kind: 'bubblewrap', network: true });
      expect(warnings).toEqual([]);
      const sandboxRoot = actor.sandbox!.root;
      const literalTarget = resolve(sandboxRoot, literal);
      const literalExisted = existsSync(literalTarget);
      const results = await ends(actor);
      expect(results.map((result) => result.name)).toEqual([
        'move',
        'move',
        'spawn_writer',
        'spawn_writer',
        'spawn_writer',
        'spawn_writer',
        'git',
        'git',
      ]);
      expect(results[6]!.text).toBe('committed');
      expect(results[7]!.text).toBe('init');
      // The literal "../" escape: the rest of the file system is read-only.
      expect(results[0]!.text).toMatch(/move failed: (EROFS|EXDEV|ENOENT)/);
      expect(existsSync(literalTarget)).toBe(literalExisted);
      // Absolute project paths land in the sandbox, which is mounted at the project's path (a
      // rename between the two mounts of the sandbox is refused by the kernel: EXDEV).
      expect(results[1]!.text).toMatch(/^moved |move failed: EXDEV/);
      expect(results[2]!.text).toBe('writer: ok');
      expect(await readFile(join(sandboxRoot, 'keep.txt'), 'utf8')).toBe('pwned');
      // The canary beside the project is under /tmp, which is private to the server: its
      // writes go to a tmpfs that vanishes with it. The home folder is hidden (read-only and
      // empty): the canary's folder does not exist there.
      expect(existsSync(join(canary, 'new.txt'))).toBe(false);
      expect(await readFile(join(canary, 'canary.txt'), 'utf8')).toBe('canary\n');
      expect(results[5]!.text).toMatch(/^writer: (ENOENT|EROFS)$/);
      expect(existsSync(join(homeCanary, 'new.txt'))).toBe(false);
      expect(userState()).toEqual(before);
      expect(await readFile(join(project, 'keep.txt'), 'utf8')).toBe(
        'committed\nuncommitted edit\n',
      );
      // The server's host process group goes away with the actor.
      const pid = actor.servers().pid('hostile')!;
      await actor.deactivate();
      expect(isProcessGroupAlive(pid)).toBe(false);
    },
  );

  it(
    'confine off shows what confinement adds: the same calls escape into the project and the canaries',
    { timeout: 120_000 },
    async () => {
      await using actor = await actorWith('unconfined', hostileCalls(), { confine: 'off' });
      const before = userState();
      await actor.activate();
      expect(actor.confinement).toEqual({ kind: 'none', network: true });
      const results = await ends(actor);
      expect(results.map((result) => result.text.split(' ')[0])).toEqual([
        'moved',
        'writer:',
        'writer:',
        'writer:',
        'writer:',
      ]);
      // The move put the sandbox's other.txt over the user's keep.txt, then the writer won.
      expect(existsSync(join(actor.sandbox!.root, 'other.txt'))).toBe(false);
      const after = userState();
      // Each route escaped: path rewriting cannot see these arguments.
      expect(after.project).not.toBe(before.project);
      expect(await readFile(join(project, 'keep.txt'), 'utf8')).toBe('pwned');
      expect(await readFile(join(canary, 'new.txt'), 'utf8')).toBe('pwned');
      expect(await readFile(join(canary, 'canary.txt'), 'utf8')).toBe('pwned');
      expect(await readFile(join(homeCanary, 'new.txt'), 'utf8')).toBe('pwned');
    },
  );

  it(
    'maps error messages back: a JSON-RPC error and an error result show logical paths only',
    { timeout: 120_000 },
    async () => {
      await using actor = await actorWith('errors', [
        { name: 'stat_file', args: { path: 'missing/file.txt' } },
        { name: 'fail_text', args: { path: 'docs/none.md' } },
        { name: 'write_text', args: { path: `${project}/../outside.txt`, content: 'x' } },
      ]);
      await actor.activate();
      const results = await ends(actor);
      const root = actor.sandbox!.root;
      expect(results[0]!.text).toContain("stat 'missing/file.txt'");
      expect(results[1]!.text).toContain('cannot open docs/none.md (cwd .)');
      expect(results[2]!.text).toMatch(/was refused: it is outside the project/);
      for (const { text } of results) {
        expect(text).not.toContain(root);
        expect(text).not.toContain(`${project}/`);
        expect(text).not.toContain(sandboxBase);
      }
    },
  );

  it('required refuses to start unconfined, naming the fix', { timeout: 60_000 }, async () => {
    await using actor = await actorWith(
      'strict',
      [],
      { confine: 'required' },
      {
        confinement: { backend: { type: 'bubblewrap', path: join(scratch, 'no-such-bwrap') } },
      },
    );
    const error = await actor.activate().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(AgentsError.hasCode(error, 'CONFINEMENT_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toContain('apt-get install bubblewrap');
    expect((error as Error).message).toContain('no-such-bwrap');
    expect(actor.active).toBe(false);

    // The same with bubblewrap missing from PATH (which still finds git).
    const path = process.env['PATH'];
    const bin = join(scratch, 'bin-without-bwrap');
    await mkdir(bin);
    await symlink(execFileSync('which', ['git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
    process.env['PATH'] = bin;
    try {
      await using onPath = await actorWith('strict-path', [], { confine: 'required' });
      await expect(onPath.activate()).rejects.toThrow(/"bwrap"\) was not found on PATH/);
    } finally {
      process.env['PATH'] = path;
    }
  });

  it('auto without bubblewrap runs unconfined and says so once', { timeout: 60_000 }, async () => {
    const warnings: string[] = [];
    const options = {
      confinement: {
        backend: { type: 'bubblewrap' as const, path: join(scratch, 'missing-bwrap') },
      },
      onWarning: (message: string) => warnings.push(message),
    };
    for (const name of ['loose-1', 'loose-2']) {
      await using actor = await actorWith(name, [{ name: 'whereami', args: {} }], {}, options);
      await actor.activate();
      expect(actor.confinement?.kind).toBe('none');
      expect((await ends(actor))[0]!.text).toContain('"cwd":"."');
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /WITHOUT OS confinement: .*missing-bwrap.*apt-get install bubblewrap/,
    );
  });

  it('network: false cuts confined servers off the host network', { timeout: 60_000 }, async () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    const listener = createServer((socket) => socket.end('hello'));
    await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
    const port = (listener.address() as AddressInfo).port;
    try {
      const outcomes: string[] = [];
      for (const [name, network] of [
        ['net-on', true],
        ['net-off', false],
      ] as const) {
        await using actor = await actorWith(
          name,
          [{ name: 'connect', args: { port: String(port) } }],
          { network },
        );
        await actor.activate();
        expect(actor.confinement).toEqual({ kind: 'bubblewrap', network });
        outcomes.push((await ends(actor))[0]!.text);
      }
      expect(outcomes[0]).toBe('connect: hello');
      expect(outcomes[1]).toMatch(/connect: (ECONNREFUSED|ENETUNREACH)/);
    } finally {
      listener.close();
    }
  });

  it('the server sees the sandbox as its working folder', { timeout: 60_000 }, async () => {
    await using actor = await actorWith('where', [{ name: 'whereami', args: {} }]);
    await actor.activate();
    const [where] = await ends(actor);
    // Mapped back: "." is the sandbox root, whatever the host path.
    expect(JSON.parse(where!.text)).toMatchObject({ cwd: '.' });
  });
});
