/**
 * The `@agents/langgraph-mcp/policy` entry: policies and their decisions, tool pins, approvals
 * (human in the loop), the output budget and the audit log.
 */
export type {
  ClientRequestPolicy,
  Policy,
  PolicyDecision,
  PolicyInput,
  PolicyMode,
  PolicyRule,
} from '../config/policy-schema.js';
export { PolicySchema, parsePolicy } from '../config/policy-schema.js';
export type { PolicyVerdict } from '../policy/decide.js';
export { decide } from '../policy/decide.js';
export type { PinStore, ToolPin } from '../policy/pins.js';
export { createMemoryPinStore, createPinStore } from '../policy/pins.js';
export type { ApprovalPreview, ApprovalResponse } from '../policy/approval.js';
export { isApprovalPreview, parseApprovalResponse } from '../policy/approval.js';
export type {
  ElicitAnswer,
  InputQuestion,
  InputRequestPreview,
  InputResponse,
} from '../policy/input-requests.js';
export {
  INPUT_REQUEST_KIND,
  InputResponseSchema,
  isInputRequestPreview,
} from '../policy/input-requests.js';
export { answerInputRequest } from '../policy/input-answer.js';
export type {
  Approver,
  PolicyMiddlewareOptions,
  PolicyRecord,
} from '../policy/policy-middleware.js';
export { createInterruptApprover, createPolicyMiddleware } from '../policy/policy-middleware.js';
// `clientRequests.sampling: model` in your own graph: createToolPipeline({ policy: { policy, sampler } }).
export type { Sampler, SamplingOrigin } from '../policy/model-sampling.js';
export { createModelSampler } from '../policy/model-sampling.js';
export type { SamplingRequest, SamplingResult } from '../policy/sampling-request.js';
export type { HumanInTheLoopPolicy } from '../policy/hitl.js';
export { createHumanInTheLoopPolicy } from '../policy/hitl.js';
export type { BudgetRecord, OutputBudgetOptions, Spill } from '../policy/output-budget.js';
export { createFileSpill, createOutputBudgetMiddleware } from '../policy/output-budget.js';
export type { AuditEntry } from '../policy/audit-entry.js';
export type { AuditLog } from '../policy/audit-log.js';
export { auditLogPath, createAuditLog, readAuditLog } from '../policy/audit-log.js';
export { createAuditMiddleware } from '../policy/audit.js';
