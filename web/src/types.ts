// The API shapes the console uses, from src/protocol (types only: the browser bundle never imports server code).

export type {
  ApprovalAction,
  ApprovalDetail,
  ApprovalListQuery,
  ApprovalPage,
  ApprovalRecord,
  ApprovalSummary,
  BulkDecisionRequest,
  BulkDecisionResponse,
  BulkDecisionResult,
} from "../../src/protocol/approvals.js";
export type {
  ApprovalChanges,
  BodyDiff,
  ChangeItem,
  ChangeSeverity,
  DiffLine,
  RelationEdge,
} from "../../src/protocol/changes.js";
export type {
  Activity,
  ActivityBucket,
  ActivityFigures,
  ApprovalCounts,
  ApprovalStatusName,
  ConnectorView,
  ConsoleRole,
  ConsoleSession,
  EnrolledClient,
  LastIngest,
  Overview,
  PageDetail,
  PageGraph,
  PageList,
  PageSummary,
  ProblemBody,
  SearchResults,
  SessionTimeline,
  WebClient,
} from "../../src/protocol/console-api.js";

import type { ApprovalRecord } from "../../src/protocol/approvals.js";

export type DecisionOutcomeName = "applied" | "rejected" | "conflict" | "expired" | "already_decided";

/** POST /v1/approvals/:id/approve|reject (200, or 409 for conflict/expired/already_decided). */
export interface DecisionResult {
  outcome: DecisionOutcomeName;
  approval: ApprovalRecord;
  message?: string;
}
