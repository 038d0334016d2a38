import type {
  Capabilities,
  CapabilityVerdict,
  JsonSchemaObject,
  ToolCallContext,
  ToolDescriptor,
  ToolEntry,
  ToolResult,
} from '../../src/core/tool-descriptor.js';

function verdict(value: boolean): CapabilityVerdict {
  return { value, source: 'override', reason: 'test' };
}

/** Capabilities of a read-only or a writing tool. */
export function capabilities(kind: 'read' | 'write' | 'destructive'): Capabilities {
  return {
    readOnly: verdict(kind === 'read'),
    writes: verdict(kind !== 'read'),
    destructive: verdict(kind === 'destructive'),
    openWorld: verdict(false),
    disagreements: [],
  };
}

/** A descriptor with the given name; everything else overridable. */
export function descriptor(name: string, overrides: Partial<ToolDescriptor> = {}): ToolDescriptor {
  const inputSchema: JsonSchemaObject = {
    type: 'object',
    properties: { text: { type: 'string' } },
  };
  return {
    id: `custom:${name}`,
    name,
    originalName: name,
    source: 'custom',
    description: `The ${name} tool.`,
    inputSchema,
    capabilities: capabilities('read'),
    pathArguments: [],
    fingerprint: `fp-${name}`,
    ...overrides,
  };
}

/** A tool entry whose execute is the given function. */
export function entry(
  desc: ToolDescriptor,
  execute: (args: Record<string, unknown>, context: ToolCallContext) => Promise<ToolResult>,
): ToolEntry {
  return { descriptor: desc, execute };
}

/** An entry that echoes its arguments as JSON text. */
export function echoEntry(name: string, overrides: Partial<ToolDescriptor> = {}): ToolEntry {
  return entry(descriptor(name, overrides), async (args) => ({
    content: [{ type: 'text', text: JSON.stringify(args) }],
  }));
}

/** A minimal registry with a change event, the shape `createToolRegistry()` offers. */
export class FakeRegistry {
  private entries: ToolEntry[];
  private readonly listeners = new Set<(event: unknown) => void>();
  constructor(entries: ToolEntry[]) {
    this.entries = entries;
  }
  list(): readonly ToolEntry[] {
    return this.entries;
  }
  on(event: 'change', listener: (event: unknown) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  get listenerCount(): number {
    return this.listeners.size;
  }
  replace(entries: ToolEntry[]): void {
    this.entries = entries;
    for (const listener of this.listeners) listener({ added: [], removed: [], changed: [] });
  }
}
