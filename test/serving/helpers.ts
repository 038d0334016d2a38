import type {
  Capabilities,
  CapabilityVerdict,
  JsonSchemaObject,
  ToolDescriptor,
  ToolEntry,
} from '../../src/core/tool-descriptor.js';
import { createToolRegistry } from '../../src/registry/tool-registry.js';
import type { ToolRegistryListener } from '../../src/registry/tool-registry.js';

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
export function entry(desc: ToolDescriptor, execute: ToolEntry['execute']): ToolEntry {
  return { descriptor: desc, execute };
}

/** An entry that echoes its arguments as JSON text. */
export function echoEntry(name: string, overrides: Partial<ToolDescriptor> = {}): ToolEntry {
  return entry(descriptor(name, overrides), async (args) => ({
    content: [{ type: 'text', text: JSON.stringify(args) }],
  }));
}

/**
 * The real tool registry (`createToolRegistry()`) holding one group, counting its change
 * listeners so a test can see the server unsubscribe.
 */
export class CountingRegistry {
  private readonly registry = createToolRegistry();
  private listeners = 0;
  constructor(entries: ToolEntry[]) {
    this.registry.replaceGroup('test', entries);
  }
  entries(): readonly ToolEntry[] {
    return this.registry.entries();
  }
  on(event: 'change', listener: ToolRegistryListener): () => void {
    const off = this.registry.on(event, listener);
    this.listeners++;
    return () => {
      this.listeners--;
      off();
    };
  }
  get listenerCount(): number {
    return this.listeners;
  }
  replace(entries: ToolEntry[]): void {
    this.registry.replaceGroup('test', entries);
  }
}
