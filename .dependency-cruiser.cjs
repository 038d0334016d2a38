// @ts-check
/**
 * Import boundaries of src/ (and: examples/ and graphs/ use only the package entries), checked
 * by `npm run lint` (`npm run lint:layers`).
 *
 * The folders of src/ are layers, listed bottom first. A file may import from its own folder
 * and from the folders BEFORE its own in this list, never from a folder after it: the
 * dependencies point one way, so each folder can be read, tested and changed knowing only the
 * ones below it. Type-only imports count (a type import is still a dependency of the design).
 *
 * Adding a folder to src/: put it in LAYERS at the place its imports allow. Moving a piece that
 * two layers need: move it down to the lowest layer that uses it (core/ for plain records and
 * contracts), do not add an exception here: there are none.
 */

/** @type {ReadonlyArray<readonly [folder: string, holds: string]>} */
const LAYERS = [
  [
    'core',
    'plain records and contracts every layer shares (ToolDescriptor, ChangeRecord, ToolMiddleware, ...); src/errors.ts and src/redact.ts belong here too',
  ],
  [
    'checkpoint',
    'checkpoint stores: one CheckpointBackend per `checkpointer.type` (schema, open, lease), the table',
  ],
  [
    'confinement',
    'OS confinement of server processes: one ConfinementBackend per `sandbox.confinement.type` (bubblewrap, ...) translating an intent-level launch request, the table',
  ],
  [
    'sandbox',
    'sandboxes: one SandboxBackend per `sandbox.backend` (git, memory; schema, capabilities), the table, snapshots, restore, delivery',
  ],
  ['config', 'config file schemas (actor, server, skill, policy), loading, env references'],
  ['workspace', 'the project .agents/ store: named configs on disk'],
  ['mcp', 'MCP tool adaptation: names, schemas, content, capabilities, path arguments'],
  ['registry', 'the registry of ToolDescriptors and known servers'],
  ['servers', 'MCP server processes and connections: launch, supervise, OAuth'],
  ['policy', 'policy decisions, approvals, pins, audit, output budget'],
  [
    'thread',
    "a thread's graph state (change log, rollbacks), its checkpoints, rollback and undo, compaction",
  ],
  ['skills', 'skills: built-in, custom and Agent Skills tools'],
  [
    'pipeline',
    'the tool-call pipeline: one middleware order for actors, Studio, serve and hand-built graphs; its layers (path rewrite, change tracking, ...) and the tracked ToolNode',
  ],
  [
    'replay',
    'record and replay: the cassette format, the recording and replaying MCP transports and chat models, the replay of a hand-built graph',
  ],
  [
    'runtime',
    'the AgentsRuntime: sandbox, confinement and checkpoint backends chosen from their tables, servers, tool set, one disposal order',
  ],
  ['actors', 'actors: an agent graph with its servers, sandbox, policy and skills'],
  [
    'serving',
    '`agents serve`: an actor or tool set served as an MCP server (servers/ connects to them)',
  ],
  [
    'studio',
    'LangGraph Studio graphs: createStudioGraph and the janitor that removes their sandboxes',
  ],
  ['cli', 'the `agents` command line'],
];

/** Entry points: the package's public modules. They may import any layer; no layer imports them. */
const ENTRY = [
  'src/index.ts',
  'src/adapter.ts',
  'src/entries/',
  'src/langchain.ts',
  'src/testing/',
];
/** The package entries (package.json "exports"): all that examples/ and graphs/ may import. */
const PUBLIC_ENTRIES = [
  'src/index.ts',
  'src/adapter.ts',
  'src/entries/',
  'src/langchain.ts',
  'src/serving/index.ts',
  'src/studio/index.ts',
  'src/testing/index.ts',
];
/** Files at the top of src/ that belong to the core layer. */
const CORE_ROOT_FILES = ['src/errors.ts', 'src/redact.ts'];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const folderPath = (folder) => `^src/${escape(folder)}/`;
const layerPath = (index) =>
  LAYERS[index][0] === 'core'
    ? [folderPath('core'), ...CORE_ROOT_FILES.map((file) => `^${escape(file)}$`)]
    : [folderPath(LAYERS[index][0])];
const entryPaths = ENTRY.map((entry) =>
  entry.endsWith('/') ? `^${escape(entry)}` : `^${escape(entry)}$`,
);
const ORDER = LAYERS.map(([folder]) => folder).join(' < ');

/** One rule per layer: nothing above it, no entry point. */
const layerRules = LAYERS.map(([folder], index) => {
  const below = LAYERS.slice(0, index).map(([name]) => name);
  const above = LAYERS.slice(index + 1).flatMap((_, offset) => layerPath(index + 1 + offset));
  return {
    name: `layer-${folder}`,
    severity: 'error',
    comment:
      `src/${folder}/ may import only from ${below.length ? below.join(', ') + ' and ' : ''}itself` +
      ` (the layers below it). Layer order, bottom first: ${ORDER}. Entry points` +
      ` (${ENTRY.join(', ')}) are imported by no layer. Move the shared piece down instead of` +
      ` importing up; see .dependency-cruiser.cjs.`,
    from: { path: layerPath(index) },
    to: { path: [...above, ...entryPaths] },
  };
});

const knownPaths = [...LAYERS.flatMap((_, index) => layerPath(index)), ...entryPaths];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'layer-unknown-folder',
      severity: 'error',
      comment:
        `Every file of src/ belongs to a layer. Add the new folder to LAYERS in` +
        ` .dependency-cruiser.cjs at the place its imports allow (order, bottom first: ${ORDER}).`,
      from: { path: '^src/', pathNot: knownPaths },
      // Node built-ins say nothing about layers; report the file's other imports.
      to: { dependencyTypesNot: ['core'] },
    },
    {
      name: 'examples-use-the-public-api',
      severity: 'error',
      comment:
        'examples/ and graphs/ show the library as a user gets it: import only the package' +
        ` entries (${PUBLIC_ENTRIES.join(', ')}), which package.json "exports" publishes as` +
        ' @agents/langgraph-mcp and its subpaths. Export what is missing from one of them, or' +
        ' leave it internal.',
      from: { path: '^(examples|graphs)/' },
      to: {
        path: '^src/',
        pathNot: PUBLIC_ENTRIES.map((file) =>
          file.endsWith('/') ? `^${escape(file)}` : `^${escape(file)}$`,
        ),
      },
    },
    {
      name: 'backends-through-the-runtime',
      severity: 'error',
      comment:
        'actors/, cli/ and studio/ get sandboxes from the AgentsRuntime (runtime.sandboxBackend,' +
        ' runtime.createSandbox/openSandbox) and the seam src/sandbox/backend.ts, never from a' +
        ' backend implementation (src/sandbox/git/, src/sandbox/memory/) or the table' +
        ' (src/sandbox/backends.ts): a new backend is then one file plus one table entry.',
      from: { path: '^src/(actors|cli|studio)/' },
      to: { path: ['^src/sandbox/(git|memory)/', '^src/sandbox/backends\\.ts$'] },
    },
    {
      name: 'checkpoints-through-the-runtime',
      severity: 'error',
      comment:
        'actors/, cli/ and studio/ get checkpoint stores from the AgentsRuntime' +
        ' (runtime.checkpointBackend, runtime.openCheckpointer, checkpointStores()) and use them' +
        ' through the seam src/checkpoint/backend.ts (capabilities such as lease, localFile,' +
        ' threadOwners, openStore), never from the table (src/checkpoint/backends.ts) or a' +
        " store's files (memory, sqlite*, postgres*): a new store is then one file plus one table" +
        ' entry. The listing side table of a local-file store (sqlite-listing.ts) is read without' +
        ' the table, so `agents checkpoints` starts without zod.',
      from: { path: '^src/(actors|cli|studio)/' },
      to: {
        path: '^src/checkpoint/(backends|memory|sqlite|postgres)[^/]*\\.ts$',
        pathNot: '^src/checkpoint/sqlite-listing\\.ts$',
      },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Modules of src/ import each other one way only, also inside a layer (the layer rules' +
        ' order the folders, this one the files): move the shared piece into a module both import.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment:
        'An import dependency-cruiser cannot resolve is not checked against the layers: fix the' +
        ' path (or the package) so the check sees it.',
      from: { path: '^(src|examples|graphs)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Count `import type` too: the layers are about the design, not only the emitted JS.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
