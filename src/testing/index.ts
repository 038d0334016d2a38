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
