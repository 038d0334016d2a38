import type { ToolAnnotations } from '@modelcontextprotocol/client';
import { fingerprintTool } from '../mcp/fingerprint.js';
import type {
  Capabilities,
  CapabilitySource,
  JsonSchemaObject,
  ToolDescriptor,
  ToolSource,
} from '../core/tool-descriptor.js';

/** Declared capabilities of a tool the library (or the user's code) defines. */
export interface DeclaredCapabilities {
  readOnly: boolean;
  destructive?: boolean;
  openWorld?: boolean;
}

/** What {@link createLocalDescriptor} needs. */
export interface LocalDescriptorInput {
  id: string;
  name: string;
  source: Exclude<ToolSource, 'mcp'>;
  description: string;
  inputSchema: JsonSchemaObject;
  outputSchema?: JsonSchemaObject;
  capabilities: DeclaredCapabilities;
  /** Where the capability verdicts come from; library tools declare them. */
  capabilitySource?: CapabilitySource;
  capabilityReason?: string;
  pathArguments?: string[];
}

/**
 * Builds a {@link ToolDescriptor} for a tool defined in-process (built-in, custom, agent
 * skill). Capabilities are declared, not inferred; the fingerprint covers the whole definition
 * the model sees and is computed by the same {@link fingerprintTool} as an MCP tool's.
 */
export function createLocalDescriptor(input: LocalDescriptorInput): ToolDescriptor {
  const source = input.capabilitySource ?? 'default';
  const reason = input.capabilityReason ?? `declared by the ${input.source} tool`;
  const verdict = (value: boolean) => ({ value, source, reason });
  const capabilities: Capabilities = {
    readOnly: verdict(input.capabilities.readOnly),
    writes: verdict(!input.capabilities.readOnly),
    destructive: verdict(input.capabilities.destructive ?? false),
    openWorld: verdict(input.capabilities.openWorld ?? false),
    disagreements: [],
  };
  const annotations: ToolAnnotations = {
    readOnlyHint: input.capabilities.readOnly,
    destructiveHint: input.capabilities.destructive ?? false,
    openWorldHint: input.capabilities.openWorld ?? false,
  };
  const wire = {
    name: input.name,
    description: input.description,
    inputSchema: input.inputSchema,
    ...(input.outputSchema ? { outputSchema: input.outputSchema } : {}),
    annotations,
  };
  return {
    id: input.id,
    name: input.name,
    originalName: input.name,
    source: input.source,
    description: input.description,
    rawDescription: input.description,
    inputSchema: input.inputSchema,
    ...(input.outputSchema ? { outputSchema: input.outputSchema } : {}),
    annotations,
    capabilities,
    pathArguments: input.pathArguments ?? [],
    fingerprint: fingerprintTool(wire),
  };
}

/** A text-only tool result. */
export function textResult(text: string, isError = false) {
  return { content: [{ type: 'text' as const, text }], ...(isError ? { isError: true } : {}) };
}
