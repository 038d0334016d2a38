import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { createMcpToolEntries } from '../../src/mcp/tool-adapter.js';

// Discovery is a hot path (every tool, every listing); these pin its output so a faster
// implementation can be checked against it: names, sanitizing, capabilities, path arguments,
// fingerprints and the optional fields.
const tools = [
  {
    name: 'listDirectory',
    title: 'List',
    description: 'Lists\r\na directory\u200b with a \u202e bidi mark',
    inputSchema: {
      type: 'object',
      properties: {
        dirPath: { type: 'string' },
        source: { type: 'string', description: 'Source code to run' },
        uri: { type: 'string', description: 'A file:// URI' },
      },
    },
  },
  {
    name: 'fetch.page',
    inputSchema: {
      type: 'object',
      $defs: { Options: { type: 'object', properties: { outputFile: { type: 'string' } } } },
      properties: {
        options: { $ref: '#/$defs/Options' },
        items: {
          type: 'array',
          items: { anyOf: [{ type: 'string' }, { type: 'object', properties: { file: {} } }] },
        },
      },
    },
    outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    annotations: { title: 'Fetch', readOnlyHint: 'true', openWorldHint: false },
  },
  {
    name: 'fetch_page',
    description: 'Clashes with fetch.page once sanitized.',
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true, destructiveHint: true },
  },
  { name: 'renamed', inputSchema: 'not a schema' },
  { name: 'hidden', inputSchema: { type: 'object' } },
] as unknown as Tool[];

describe('createMcpToolEntries descriptors', () => {
  it('builds the same descriptors for a varied listing', () => {
    const entries = createMcpToolEntries({
      serverName: 'srv',
      tools,
      caller: { callTool: () => Promise.resolve({ content: [] }) },
      trusted: true,
      maxDescriptionLength: 30,
      overrides: {
        hidden: { enabled: false },
        renamed: { name: 'better', pathArguments: ['p'], capabilities: { readOnly: true } },
      },
      knownPathArguments: (name) => (name === 'fetch_page' ? ['target'] : undefined),
    });
    // Invisible characters spelled out, so the snapshot shows what was kept and what stripped.
    const visible = (text: string): string =>
      text.replace(/[^\x20-\x7e\n]/gu, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`);
    expect(
      entries.map(({ descriptor }) => ({
        ...descriptor,
        description: visible(descriptor.description),
        ...(descriptor.rawDescription === undefined
          ? {}
          : { rawDescription: visible(descriptor.rawDescription) }),
      })),
    ).toMatchInlineSnapshot(`
      [
        {
          "capabilities": {
            "destructive": {
              "reason": "read-only (name word "list")",
              "source": "name-heuristic",
              "value": false,
            },
            "disagreements": [],
            "openWorld": {
              "reason": "tools may reach outside the sandbox unless shown otherwise",
              "source": "default",
              "value": true,
            },
            "readOnly": {
              "reason": "name word "list"",
              "source": "name-heuristic",
              "value": true,
            },
            "writes": {
              "reason": "name word "list"",
              "source": "name-heuristic",
              "value": false,
            },
          },
          "description": "Lists
      a directory with a  bidi\\u{2026} [description truncated: 5 more characters]",
          "fingerprint": "d5259bcf0e76cda147a238d9e79437c29d8484a871978ffe7bc8c336f5832c64",
          "id": "mcp:srv/listDirectory",
          "inputSchema": {
            "properties": {
              "dirPath": {
                "type": "string",
              },
              "source": {
                "description": "Source code to run",
                "type": "string",
              },
              "uri": {
                "description": "A file:// URI",
                "type": "string",
              },
            },
            "type": "object",
          },
          "name": "listDirectory",
          "originalName": "listDirectory",
          "pathArguments": [
            "dirPath",
            "uri",
          ],
          "rawDescription": "Lists\\u{d}
      a directory\\u{200b} with a \\u{202e} bidi mark",
          "serverName": "srv",
          "source": "mcp",
          "title": "List",
        },
        {
          "annotations": {
            "openWorldHint": false,
            "readOnlyHint": "true",
            "title": "Fetch",
          },
          "capabilities": {
            "destructive": {
              "reason": "read-only (name word "fetch")",
              "source": "name-heuristic",
              "value": false,
            },
            "disagreements": [
              "annotation readOnlyHint="true" ignored: not a boolean",
            ],
            "openWorld": {
              "reason": "annotation openWorldHint=false from a trusted server",
              "source": "annotation",
              "value": false,
            },
            "readOnly": {
              "reason": "name word "fetch"",
              "source": "name-heuristic",
              "value": true,
            },
            "writes": {
              "reason": "name word "fetch"",
              "source": "name-heuristic",
              "value": false,
            },
          },
          "description": "",
          "fingerprint": "d1f6a7f9ed17fbc6ba81bd691fb1be7ffe27dcd29c7f856a99c37d16072338ca",
          "id": "mcp:srv/fetch.page",
          "inputSchema": {
            "$defs": {
              "Options": {
                "properties": {
                  "outputFile": {
                    "type": "string",
                  },
                },
                "type": "object",
              },
            },
            "properties": {
              "items": {
                "items": {
                  "anyOf": [
                    {
                      "type": "string",
                    },
                    {
                      "properties": {
                        "file": {},
                      },
                      "type": "object",
                    },
                  ],
                },
                "type": "array",
              },
              "options": {
                "$ref": "#/$defs/Options",
              },
            },
            "type": "object",
          },
          "name": "fetch_page_262f65ca",
          "originalName": "fetch.page",
          "outputSchema": {
            "properties": {
              "ok": {
                "type": "boolean",
              },
            },
            "type": "object",
          },
          "pathArguments": [
            "options.outputFile",
            "items[].file",
          ],
          "serverName": "srv",
          "source": "mcp",
          "title": "Fetch",
        },
        {
          "annotations": {
            "destructiveHint": true,
            "readOnlyHint": true,
          },
          "capabilities": {
            "destructive": {
              "reason": "annotation destructiveHint=true",
              "source": "annotation",
              "value": true,
            },
            "disagreements": [
              "annotation readOnlyHint=true ignored: destructiveHint=true contradicts it",
            ],
            "openWorld": {
              "reason": "tools may reach outside the sandbox unless shown otherwise",
              "source": "default",
              "value": true,
            },
            "readOnly": {
              "reason": "annotations contradict (readOnlyHint=true and destructiveHint=true)",
              "source": "annotation",
              "value": false,
            },
            "writes": {
              "reason": "annotations contradict (readOnlyHint=true and destructiveHint=true)",
              "source": "annotation",
              "value": true,
            },
          },
          "description": "Clashes with fetch.page once s\\u{2026} [description truncated: 9 more characters]",
          "fingerprint": "e39c7f632363af195e2837da7b97db1759501438827b0d0a19a2b2436444d75c",
          "id": "mcp:srv/fetch_page",
          "inputSchema": {
            "type": "object",
          },
          "name": "fetch_page",
          "originalName": "fetch_page",
          "pathArguments": [
            "target",
          ],
          "rawDescription": "Clashes with fetch.page once sanitized.",
          "serverName": "srv",
          "source": "mcp",
        },
        {
          "capabilities": {
            "destructive": {
              "reason": "read-only (config override sets readOnly=true)",
              "source": "override",
              "value": false,
            },
            "disagreements": [],
            "openWorld": {
              "reason": "tools may reach outside the sandbox unless shown otherwise",
              "source": "default",
              "value": true,
            },
            "readOnly": {
              "reason": "config override sets readOnly=true",
              "source": "override",
              "value": true,
            },
            "writes": {
              "reason": "config override sets readOnly=true",
              "source": "override",
              "value": false,
            },
          },
          "description": "",
          "fingerprint": "ce42c01893ca76fddf8a92e01951030fab35fc6856eef20dce25006efb237dc3",
          "id": "mcp:srv/renamed",
          "inputSchema": "not a schema",
          "name": "better",
          "originalName": "renamed",
          "pathArguments": [
            "p",
          ],
          "serverName": "srv",
          "source": "mcp",
          "warnings": [
            "inputSchema is not an object; arguments are not validated",
          ],
        },
      ]
    `);
  });
});
