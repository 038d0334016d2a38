/** Tool overrides and tool resources: the per-tool pieces servers and skills share. */
import { z } from 'zod';

/** Per-tool overrides: capabilities, path arguments, a different name. */
export const ToolOverrideSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-zA-Z0-9_-]{1,64}$/)
      .optional()
      .describe('A different provider-safe name for the tool.'),
    description: z.string().optional().describe('Replace the description the model sees.'),
    capabilities: z
      .strictObject({
        readOnly: z.boolean().optional(),
        writes: z.boolean().optional(),
        destructive: z.boolean().optional(),
        openWorld: z.boolean().optional(),
      })
      .optional()
      .describe('Capability verdicts that win over inference.'),
    pathArguments: z
      .array(z.string())
      .optional()
      .describe('Argument locations holding file paths (`path`, `paths[]`, `edits[].file`).'),
    enabled: z.boolean().optional().describe('Set false to hide the tool.'),
  })
  .describe('Overrides for one tool.');
export type ToolOverride = z.infer<typeof ToolOverrideSchema>;

/** Overrides keyed by the server's tool name. */
export const ToolOverridesSchema = z.record(z.string(), ToolOverrideSchema);
export type ToolOverrides = z.infer<typeof ToolOverridesSchema>;

/**
 * A tool resource (ADR-0027 "AEP tool contributions resolve to MCP"): a stable id mapped to one
 * server's tool.
 */
export const ToolResourceSchema = z
  .strictObject({
    id: z
      .string()
      .regex(/^[a-zA-Z0-9_.:/-]+$/)
      .describe('Stable tool id agents keep.'),
    server: z.string().describe('Name of a server record in servers/.'),
    tool: z.string().describe('The tool name on that server.'),
    enabled: z.boolean().default(true),
    overrides: ToolOverrideSchema.optional(),
  })
  .describe('A tool resource: stable id → server + tool.');
export type ToolResource = z.infer<typeof ToolResourceSchema>;
