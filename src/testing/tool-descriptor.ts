import type { ToolAnnotations } from '@modelcontextprotocol/client';
import type { JsonSchemaObject, ToolDescriptor, ToolEntry } from '../core/tool-descriptor.js';
import { inferCapabilities } from '../mcp/capabilities.js';
import { fingerprintTool } from '../mcp/fingerprint.js';
import { detectPathArguments } from '../mcp/path-arguments.js';
import { toProviderSafeName } from '../mcp/naming.js';

/** What {@link buildToolDescriptor} needs: a name; everything else has a test-friendly default. */
export interface ToolDescriptorInput {
  /** The tool's name at its source; also the model-facing name when it is provider-safe. */
  name: string;
  /** The MCP server it comes from (default `test`): the id is `mcp:SERVER/NAME`. */
  server?: string;
  /** Another stable id, e.g. a tool resource id (`repo.status`). */
  id?: string;
  description?: string;
  inputSchema?: JsonSchemaObject;
  outputSchema?: JsonSchemaObject;
  /** MCP annotations, read by the same capability inference as a real server's tool. */
  annotations?: ToolAnnotations;
  /** Treat the server's annotations as trusted (`servers/NAME.yaml` `trust_annotations`). */
  trusted?: boolean;
  /**
   * Capabilities fixed as a config override would (`source: 'override'`); unset ones are
   * inferred from the name and annotations like any MCP tool's.
   */
  capabilities?: {
    readOnly?: boolean;
    writes?: boolean;
    destructive?: boolean;
    openWorld?: boolean;
  };
  /** Path argument locations (default: detected from the input schema). */
  pathArguments?: string[];
}

/**
 * A complete {@link ToolDescriptor} as the library would make it for an MCP tool, for tests of
 * middleware, policies and graphs: capabilities come from the real inference (name words,
 * annotations, overrides), the fingerprint from the real hash of the wire definition, path
 * arguments from the real schema detection. Nothing is contacted.
 */
export function buildToolDescriptor(input: ToolDescriptorInput): ToolDescriptor {
  const server = input.server ?? 'test';
  const inputSchema = input.inputSchema ?? { type: 'object', properties: {} };
  const description = input.description ?? `${input.name} (test tool)`;
  const wire = {
    name: input.name,
    description,
    inputSchema,
    ...(input.outputSchema ? { outputSchema: input.outputSchema } : {}),
    ...(input.annotations ? { annotations: input.annotations } : {}),
  };
  return {
    id: input.id ?? `mcp:${server}/${input.name}`,
    name: toProviderSafeName(input.name),
    originalName: input.name,
    source: 'mcp',
    serverName: server,
    description,
    rawDescription: description,
    inputSchema,
    ...(input.outputSchema ? { outputSchema: input.outputSchema } : {}),
    ...(input.annotations ? { annotations: input.annotations } : {}),
    capabilities: inferCapabilities({
      name: input.name,
      ...(input.annotations ? { annotations: input.annotations } : {}),
      ...(input.capabilities ? { override: { capabilities: input.capabilities } } : {}),
      ...(input.trusted === undefined ? {} : { trusted: input.trusted }),
    }),
    pathArguments: input.pathArguments ?? detectPathArguments(inputSchema),
    fingerprint: fingerprintTool(wire),
  };
}

/**
 * A {@link ToolEntry} for {@link buildToolDescriptor}'s descriptor. Without `execute`, the tool
 * answers with its arguments as JSON text, so a test can see what reached it.
 */
export function buildToolEntry(
  input: ToolDescriptorInput,
  execute?: ToolEntry['execute'],
): ToolEntry {
  return {
    descriptor: buildToolDescriptor(input),
    execute:
      execute ?? (async (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] })),
  };
}
