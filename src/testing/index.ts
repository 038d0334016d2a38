/**
 * Test helpers for users of the library (published as `@agents/langgraph-mcp/testing`).
 * Nothing here talks to a network or needs an API key.
 */
export {
  ScriptedChatModel,
  createScriptedModel,
  parseModelScript,
} from '../actors/scripted-model.js';
export type {
  ScriptedChatModelOptions,
  ScriptedStep,
  ModelScriptInput,
} from '../actors/scripted-model.js';
export type { ToolDescriptorInput } from './tool-descriptor.js';
export { buildToolDescriptor, buildToolEntry } from './tool-descriptor.js';
export type {
  Cassette,
  CassetteEntry,
  CassetteHeader,
  McpExchangeEntry,
  McpNotificationEntry,
  ModelTurnEntry,
  RecordedMessage,
} from '../replay/cassette.js';
export {
  CASSETTE_FORMAT,
  CASSETTE_FORMAT_VERSION,
  formatCassette,
  parseCassette,
  readCassette,
} from '../replay/cassette.js';
export type { CassetteRecorder, CassetteRecorderOptions } from '../replay/cassette-recorder.js';
export { createCassetteRecorder } from '../replay/cassette-recorder.js';
export type { CassetteRedactOptions, PathAlias } from '../replay/cassette-redact.js';
export type { DivergenceDetails, DivergenceKind } from '../replay/divergence.js';
export { ReplayDivergenceError } from '../replay/divergence.js';
export type { RecordingTransportOptions, TransportLike } from '../replay/recording-transport.js';
export { createRecordingTransport } from '../replay/recording-transport.js';
export type { ReplayTransport, ReplayTransportOptions } from '../replay/replay-transport.js';
export { createReplayTransport } from '../replay/replay-transport.js';
export type { RecordingChatModelOptions, ReplayChatModelOptions } from '../replay/chat-models.js';
export { RecordingChatModel, ReplayChatModel } from '../replay/chat-models.js';
export type { ReplayCassetteOptions, ReplayRun } from '../replay/replay-graph.js';
export { replayCassette } from '../replay/replay-graph.js';
export type { Contract, ContractCase } from './contract.js';
export type { ConfinementContract, ConfinementContractOptions } from './confinement-contract.js';
export { confinementContract } from './confinement-contract.js';
export type {
  SandboxContractFixture,
  SandboxContractOptions,
  SandboxUnderTest,
} from './sandbox-contract.js';
export { CONTRACT_FILES, sandboxContract } from './sandbox-contract.js';
export { checkpointerContract } from './checkpointer-contract.js';
