// Every module that exports commands, each behind a dynamic import: the bundle makes each one (and what only it
// imports) a chunk of its own, loaded when one of its commands runs.

export const COMMAND_MODULES = {
  agents: () => import("./commands/agents.js"),
  auto: () => import("./commands/auto.js"),
  "client-tools": () => import("./commands/client-tools.js"),
  components: () => import("./commands/components.js"),
  connect: () => import("./commands/connect.js"),
  demo: () => import("./commands/demo.js"),
  executors: () => import("./commands/executors.js"),
  hook: () => import("./commands/hook.js"),
  install: () => import("./commands/install.js"),
  mcp: () => import("./commands/mcp.js"),
  orchestrator: () => import("./commands/orchestrator.js"),
  "server-activation": () => import("./commands/server-activation.js"),
  "server-approvals": () => import("./commands/server-approvals.js"),
  "server-backup": () => import("./commands/server-backup.js"),
  "server-clients": () => import("./commands/server-clients.js"),
  "server-console": () => import("./commands/server-console.js"),
  "server-context": () => import("./commands/server-context.js"),
  "server-enrollment": () => import("./commands/server-enrollment.js"),
  "server-eval": () => import("./commands/server-eval.js"),
  "server-init": () => import("./commands/server-init.js"),
  "server-ops": () => import("./commands/server-ops.js"),
  "server-start": () => import("./commands/server-start.js"),
  "server-store": () => import("./commands/server-store.js"),
  usage: () => import("./commands/usage.js"),
  version: () => import("./commands/version.js"),
} satisfies Record<string, () => Promise<object>>;

export type CommandModuleName = keyof typeof COMMAND_MODULES;
