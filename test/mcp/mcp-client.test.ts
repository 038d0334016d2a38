/**
 * `mcp/mcp-client.ts` tells the SDKs' errors apart without importing them (issue 29: the adapter
 * entry loads neither SDK nor zod). These are the real error classes of both SDKs, so a change
 * in how either marks its errors fails here rather than in a user's error handling.
 */
import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UrlElicitationRequiredError as V2UrlElicitationRequiredError,
} from '@modelcontextprotocol/client';
import { McpError, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  httpStatusOf,
  isSdkFailure,
  jsonRpcErrorCode,
  jsonRpcErrorData,
  jsonRpcErrorInHttpBody,
  resultSchemaIssues,
} from '../../src/mcp/mcp-client.js';

describe('SDK errors recognised without importing the SDKs', () => {
  it('v1 McpError and its subclass: local failures by code, server errors with code and data', () => {
    expect(isSdkFailure(new McpError(-32001, 'Request timed out'), 'timeout')).toBe(true);
    expect(isSdkFailure(new McpError(-32000, 'Connection closed'), 'closed')).toBe(true);
    expect(isSdkFailure(new McpError(-32000, 'Connection closed'), 'timeout')).toBe(false);
    expect(jsonRpcErrorCode(new McpError(-32001, 'Request timed out'))).toBeUndefined();
    const server = new McpError(-32602, 'bad params', { field: 'x' });
    expect(jsonRpcErrorCode(server)).toBe(-32602);
    expect(jsonRpcErrorData(server)).toEqual({ field: 'x' });
    const url = new UrlElicitationRequiredError([
      { mode: 'url', message: 'log in', url: 'https://example.com', elicitationId: 'e1' },
    ]);
    expect(jsonRpcErrorCode(url)).toBe(-32042);
  });

  it('v2 SdkError, SdkHttpError and ProtocolError by the brands the SDK stamps', () => {
    expect(isSdkFailure(new SdkError(SdkErrorCode.RequestTimeout, 'late'), 'timeout')).toBe(true);
    expect(isSdkFailure(new SdkError(SdkErrorCode.ConnectionClosed, 'gone'), 'closed')).toBe(true);
    expect(isSdkFailure(new SdkError(SdkErrorCode.ConnectionClosed, 'gone'), 'timeout')).toBe(
      false,
    );
    const protocol = new ProtocolError(-32603, 'boom', { why: 'no' });
    expect(jsonRpcErrorCode(protocol)).toBe(-32603);
    expect(jsonRpcErrorData(protocol)).toEqual({ why: 'no' });
    expect(jsonRpcErrorCode(new V2UrlElicitationRequiredError([]))).toBe(-32042);
    const http = new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'HTTP 401', {
      status: 401,
      text: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'auth' } }),
    });
    expect(httpStatusOf(http)).toBe(401);
    expect(jsonRpcErrorInHttpBody(http)).toEqual({ code: -32001, message: 'auth' });
    // An SdkHttpError is an SdkError (the brand of each class in the chain is stamped).
    expect(isSdkFailure(http, 'closed')).toBe(false);
    const invalid = new SdkError(
      SdkErrorCode.InvalidResult,
      'Invalid result for tools/call: [{"path":["content"],"message":"Required"}]',
    );
    expect(resultSchemaIssues(invalid)).toEqual([{ path: ['content'], message: 'Required' }]);
  });

  it('look-alikes that are not SDK errors are not taken for them', () => {
    const plain = Object.assign(new Error('MCP error -32001: Request timed out'), {
      code: -32001,
      name: 'McpError',
    });
    expect(isSdkFailure(plain, 'timeout')).toBe(false);
    expect(jsonRpcErrorCode(plain)).toBeUndefined();
    const forged = { code: SdkErrorCode.RequestTimeout, status: 500 };
    expect(isSdkFailure(forged, 'timeout')).toBe(false);
    expect(httpStatusOf(forged)).toBeUndefined();
    expect(resultSchemaIssues(new Error('Invalid result'))).toBeUndefined();
  });
});
