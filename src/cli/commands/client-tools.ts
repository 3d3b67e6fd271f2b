// `ivoai doctor`, `ivoai project init|show`, `ivoai router serve`.

import { DEFAULT_PROBE_TIMEOUT_MS } from "../../client/components/selection.js";
import { openRegistry, type RegistrySnapshot } from "../../client/connections/registry.js";
import { probeUserServer } from "../../client/connections/user-probe.js";
import { resolveUserServer } from "../../client/connections/user-servers.js";
import { type DoctorReport, runDoctor } from "../../client/doctor/doctor.js";
import { describeIdentity, initProject, resolveIdentity } from "../../client/project.js";
import { startRouter } from "../../client/router/router.js";
import { parseSourceFlags, selectSources } from "../../client/router/selection.js";
import { serveUntilStopped } from "../../client/router/serve.js";
import { IvoaiError } from "../../shared/errors.js";
import { oneLine } from "../../shared/terminal-text.js";
import { defineCommand, type GroupSpec } from "../command.js";
import { formatTable } from "../output.js";

export const doctorCommand = defineCommand({
  name: "doctor",
  summary:
    "Check this machine: its component matrix, file permissions, connected servers (never shows secrets)",
  description:
    "One row per component: supported here or not, healthy, the implementation that is active and why\n" +
    "(what a launch or AUTO would run), and whether ivoai needs it. Exit status 1 when a required row is\n" +
    "unhealthy (native SQLite, the session store, an enabled server, a configured coordinator).",
  json: true,
  options: {
    "probe-timeout": {
      type: "integer",
      value: "SECONDS",
      min: 1,
      max: 600,
      description:
        "bound of every external probe: agent --version and login, preflights, servers (default 5)",
    },
  },
  async run(ctx) {
    const seconds = ctx.options["probe-timeout"];
    const registry = openRegistry(ctx.env);
    const timeoutMs = seconds !== undefined ? seconds * 1000 : DEFAULT_PROBE_TIMEOUT_MS;
    const snapshot = await registry.read().catch(() => undefined);
    const userServers = (snapshot?.userServers ?? []).map((server) => ({
      name: server.name,
      enabled: server.enabled,
      required: server.required,
      probe: () =>
        probeUserServer(resolveUserServer(snapshot as RegistrySnapshot, server.name), {
          timeoutMs,
          env: ctx.env,
        }),
    }));
    const report = await runDoctor(registry, {
      env: ctx.env,
      ...(seconds !== undefined ? { probeTimeoutMs: seconds * 1000 } : {}),
      userServers,
    });
    ctx.out.data(report, renderDoctor);
    return report.status === "fail" ? 1 : 0;
  },
});

function renderDoctor(r: DoctorReport): string {
  return [
    `status: ${r.status}`,
    "",
    formatTable(
      ["COMPONENT", "STATUS", "HEALTHY", "ACTIVE", "REQUIRED", "WHY"],
      r.matrix.map((m) => [
        m.component,
        m.status,
        m.healthy,
        m.active ?? "-",
        m.required ? "yes" : "no",
        oneLine(m.why),
      ]),
    ),
    "",
    formatTable(
      ["FILE", "EXPECTED", "ACTUAL", "OK"],
      r.files.map((f) => [f.path, f.expected, f.actual, f.ok ? "yes" : "NO"]),
      "no client files yet",
    ),
    "",
    formatTable(
      ["SERVER", "PURPOSE", "ENABLED", "CREDENTIAL", "REACHABLE", "READINESS", "TLS", "PROTOCOL", "DETAIL"],
      r.servers.map((s) => [
        s.alias,
        s.purpose,
        s.enabled ? "yes" : "no",
        s.credential_stored ? "stored" : "MISSING",
        s.reachable,
        s.readiness,
        s.tls,
        s.protocol_version === null ? "-" : String(s.protocol_version),
        s.detail,
      ]),
      "no servers connected",
    ),
    ...(r.next.length > 0 ? ["", "next steps:", ...r.next.map((step) => `  - ${step}`)] : []),
  ].join("\n");
}

export const projectGroup: GroupSpec = {
  kind: "group",
  name: "project",
  summary: "This folder's ivoai identity",
  children: [
    defineCommand({
      name: "init",
      summary: "Pin this worktree (or folder outside Git) to its project id with a .ivoai.toml marker",
      json: true,
      async run(ctx) {
        const identity = await initProject(process.cwd(), { env: ctx.env });
        ctx.out.data(identity, (i) => `project ${i.id} at ${i.root} (${i.marker})`);
        return 0;
      },
    }),
    defineCommand({
      name: "show",
      summary: "Show the identity sessions started here use, and which rule gave it",
      description:
        "Rules, first that applies: the nearest .ivoai.toml upwards (marker); the main Git repository, one\n" +
        "project for all its linked worktrees and subfolders (repo-root); outside Git, the host (host:NAME).",
      json: true,
      async run(ctx) {
        const identity = await resolveIdentity(process.cwd(), { env: ctx.env });
        ctx.out.data(identity, describeIdentity);
        return 0;
      },
    }),
  ],
};

export const routerGroup: GroupSpec = {
  kind: "group",
  name: "router",
  summary: "The per-session knowledge router (for debugging and scripts)",
  children: [
    defineCommand({
      name: "serve",
      summary:
        "Run a KnowledgeRouter in the foreground and print its endpoints and capability as one JSON line",
      description:
        "The capability is a local, short-lived bearer for this router only; it dies when the router stops.\n" +
        "Upstream server credentials never leave this process.",
      json: true,
      options: {
        "knowledge-source": {
          type: "string",
          multiple: true,
          value: "NAME",
          description:
            "only these servers, by alias, id, purpose or redundancy group (repeat or comma-separate)",
          complete: "knowledge-source",
        },
        "deadline-ms": {
          type: "integer",
          value: "MS",
          min: 10,
          max: 600_000,
          description: "per-source read deadline in milliseconds (default 15000)",
        },
        project: {
          type: "string",
          value: "ID",
          description: "project scope for memory (default: this folder's identity)",
        },
        "session-id": { type: "string", value: "ID", description: "session id sent with every call" },
      },
      async run(ctx) {
        const deadlineMs = ctx.options["deadline-ms"];
        const sources = await selectSources(
          openRegistry(ctx.env),
          parseSourceFlags(ctx.options["knowledge-source"]),
        );
        if (sources.length === 0)
          throw new IvoaiError(
            "CONFIG_MISSING",
            "no enabled servers are connected (see 'ivoai connect server add')",
          );
        const project = ctx.options.project ?? (await resolveIdentity(process.cwd())).id;
        const sessionId = ctx.options["session-id"];
        const router = await startRouter({
          sources,
          project,
          ...(sessionId ? { sessionId } : {}),
          ...(deadlineMs !== undefined ? { deadlineMs } : {}),
        });
        ctx.out.line(
          JSON.stringify({
            event: "ready",
            url: router.url,
            endpoints: router.endpoints,
            capability: router.capability,
            read_only_capability: router.readOnlyCapability,
            expires_at: router.expiresAt,
            project,
            sources: router.sources,
          }),
        );
        return serveUntilStopped(router, {
          stopSignal: ctx.stopSignal,
          notice: (message) => ctx.out.note(message),
        });
      },
    }),
  ],
};
