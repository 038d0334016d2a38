/**
 * The `@agents/langgraph-mcp/sandbox` entry: the git sandbox outside the user's tree (create,
 * open, list, prune, remove), its path map, and delivery of its changes (diff, apply, commit).
 */
export type { PathMap, Sandbox, Snapshot } from '../sandbox/types.js';
export type {
  CreateSandboxOptions,
  OpenSandboxOptions,
  ReopenedSandbox,
  RunSandbox,
  SandboxBackend,
  SandboxBackendSettings,
  ShareRequest,
  SnapshotEntry,
  SnapshotReplica,
  SnapshotSharing,
  SnapshotStore,
} from '../sandbox/backend.js';
export { SANDBOX_BACKENDS, sandboxBackend } from '../sandbox/backends.js';
export { createSandbox } from '../sandbox/git/local-sandbox.js';
export type { OpenedSandbox } from '../sandbox/git/open-sandbox.js';
export { openSandbox, removeSandbox } from '../sandbox/git/open-sandbox.js';
export type { PruneSandboxesOptions, PruneSandboxesResult } from '../sandbox/prune-sandboxes.js';
export { pruneSandboxes } from '../sandbox/prune-sandboxes.js';
export type { ListSandboxesOptions, SandboxEntry } from '../sandbox/sandbox-inventory.js';
export { listSandboxes } from '../sandbox/sandbox-inventory.js';
export { agentsStateDir, projectStateDir, STATE_DIR_ENV } from '../sandbox/state-dir.js';
export type { CreatePathMapOptions, SandboxPathMap } from '../sandbox/path-map.js';
export { createPathMap } from '../sandbox/path-map.js';
export type {
  DiffHunk,
  DiffLine,
  DiffSandboxOptions,
  FileDiff,
  FormatSandboxDiffOptions,
  SandboxDiff,
} from '../sandbox/deliver/diff.js';
export { diffSandbox, formatSandboxDiff } from '../sandbox/deliver/diff.js';
export type {
  ApplyChange,
  ApplyConflict,
  ApplyResult,
  ApplySandboxOptions,
} from '../sandbox/deliver/apply.js';
export { applySandbox, undoSandboxApply } from '../sandbox/deliver/apply.js';
export type { UndoApplyOptions, UndoApplyResult } from '../sandbox/deliver/apply-journal.js';
export type {
  CommitSandboxOptions,
  CommitSandboxResult,
} from '../sandbox/deliver/commit-branch.js';
export { commitSandbox } from '../sandbox/deliver/commit-branch.js';
export type { DeliverySandbox, DeliveryThread } from '../sandbox/deliver/store-access.js';
export { isDeliverySandbox } from '../sandbox/deliver/store-access.js';
export type { SandboxBaseOrigin, SandboxFrom, SandboxWarning } from '../sandbox/base-origin.js';

export { DEFAULT_SANDBOX_EXCLUDES } from '../sandbox/sandbox-excludes.js';
export { DEFAULT_MAX_FILE_BYTES } from '../sandbox/size-cap.js';
export type { OversizedFile } from '../sandbox/size-cap.js';
export type { NestedRepo } from '../sandbox/nested-repos.js';
