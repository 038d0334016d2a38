import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { z } from 'zod';
import { checkpointerOf } from './backend.js';
import type { CheckpointBackend } from './backend.js';

const MemorySettingsSchema = z.strictObject({ type: z.literal('memory') });

/** `{ type: 'memory' }`: LangGraph's `MemorySaver`, for tests; the checkpoints die with the process. */
export const memoryCheckpointBackend = {
  type: 'memory',
  schema: MemorySettingsSchema,
  ephemeral: true,
  locate: () => ({ name: 'memory', exists: false }),
  async open(_settings, options = {}) {
    options.signal?.throwIfAborted();
    // Imported on use: LangGraph is heavy, and reading a config must not load it.
    const { MemorySaver } = await import('@langchain/langgraph');
    return checkpointerOf('memory', new MemorySaver(), async () => {});
  },
  async owns(saver: BaseCheckpointSaver) {
    const { MemorySaver } = await import('@langchain/langgraph');
    return saver instanceof MemorySaver;
  },
} satisfies CheckpointBackend<z.output<typeof MemorySettingsSchema>>;
