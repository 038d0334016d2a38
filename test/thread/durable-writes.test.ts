import { MemorySaver } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { trackCheckpointWrites } from '../../src/thread/durable-writes.js';

describe('trackCheckpointWrites (#38 item 9)', () => {
  it('settled() waits for a slow put started before it, and returns at once with none in flight', async () => {
    const inner = new MemorySaver();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const put = inner.put.bind(inner);
    inner.put = async (...args: Parameters<MemorySaver['put']>) => {
      await gate;
      return put(...args);
    };
    const tracked = trackCheckpointWrites(inner);
    expect(tracked.saver).toBeInstanceOf(MemorySaver);
    await tracked.settled();

    const config = { configurable: { thread_id: 't', checkpoint_ns: '' } };
    const checkpoint = {
      v: 4,
      id: '1',
      ts: new Date().toISOString(),
      channel_values: {},
      channel_versions: {},
      versions_seen: {},
    };
    const writing = tracked.saver.put(
      config,
      checkpoint,
      { source: 'input', step: -1, parents: {} },
      {},
    );
    let settled = false;
    const waiting = tracked.settled().then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    release();
    await waiting;
    await writing;
    expect((await inner.getTuple(config))?.checkpoint.id).toBe('1');
  });
});
