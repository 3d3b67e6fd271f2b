// The OpenCode TUI plugin (v1 API) ivoai writes into the managed frontend's TUI config: plain ESM without JSX, so it
// needs no build or npm install at runtime. It imports only the runtime modules OpenCode 1.18.33 provides to TUI
// plugins (`@opentui/solid`, `solid-js`), polls ivoai's loopback status endpoint, shows a compact status in the
// sidebar and on the home screen, and registers `/ivoai` opening a panel with the details.

/** The plugin's id in OpenCode. */
export const TUI_PLUGIN_ID = "ivoai.status";

/** Where the plugin reads the status and which environment variable holds the bearer token (never the token). */
export interface StatusEndpoint {
  statusUrl: string;
  statusTokenEnv: string;
}

/** The plugin source for `endpoint`: its settings, then the fixed parts below in order. */
export function tuiPluginSource(endpoint: StatusEndpoint): string {
  return [settingsPart(endpoint), HELPERS_PART, TEXT_PART, VIEWS_PART, PLUGIN_PART].join("");
}

// The plugin's source, in parts that stay plain JavaScript text (OpenCode loads the file as written); only the
// settings part is filled in, with JSON-quoted values.

/** The imports and settings: where the status is and which variable holds its token. */
function settingsPart(endpoint: StatusEndpoint): string {
  return `// Written by ivoai: ivoai's compact status in OpenCode's TUI and the /ivoai panel.
import { createComponent, createElement, insert, setProp } from "@opentui/solid";
import { createSignal } from "solid-js";

const STATUS_URL = ${JSON.stringify(endpoint.statusUrl)};
const TOKEN_ENV = ${JSON.stringify(endpoint.statusTokenEnv)};
const POLL_MS = 5000;
const FETCH_TIMEOUT_MS = 2000;
const MAX_ITEMS = 32;
const UNAVAILABLE = "ivoai status unavailable";
const LOADING = "ivoai status loading…";

`;
}

/** Bounded, control-free text from untrusted status fields, and the status fetch itself. */
const HELPERS_PART = `const clip = (value, max) => {
  const text = String(value ?? "").replace(/[\\u0000-\\u001f\\u007f]/g, " ");
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
};
const list = (value) => (Array.isArray(value) ? value.slice(0, MAX_ITEMS) : []);
const mark = (state) => (state === "ok" ? "● ok" : state === "unhealthy" ? "✖ unhealthy" : "? unknown");

async function fetchStatus() {
  const token = process.env[TOKEN_ENV];
  if (!token) return undefined;
  const response = await fetch(STATUS_URL, {
    headers: { authorization: "Bearer " + token },
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (!response.ok) return undefined;
  const body = await response.json();
  return body && typeof body === "object" ? body : undefined;
}

function quotaLine(entry) {
  const used = typeof entry?.used_percent === "number" ? Math.round(entry.used_percent) + "%" : "?";
  const resets = entry?.resets_at ? " resets " + clip(entry.resets_at, 32) : "";
  return clip(entry?.executor, 16) + " " + clip(entry?.window, 16) + " " + used + resets;
}

`;

/** The compact sidebar lines and the /ivoai panel's text. */
const TEXT_PART = `/** Compact lines: one summary, then one line per unhealthy source (symbol and text). */
function compactLines(status) {
  if (status === null) return [LOADING];
  if (!status) return [UNAVAILABLE];
  const sources = list(status.sources);
  const ok = sources.filter((source) => source?.state === "ok").length;
  const lines = ["ivoai · sources " + ok + "/" + sources.length + " connected"];
  for (const source of sources) {
    if (source?.state !== "ok") lines.push(mark(source?.state) + " " + clip(source?.alias, 32));
  }
  lines.push("executor " + (status.executor ? clip(status.executor, 32) : "—"));
  for (const entry of list(status.quota)) lines.push("quota " + quotaLine(entry));
  return lines;
}

/** The /ivoai panel: every source with its purpose and detail, the executor, quota and session. */
function panelText(status) {
  if (!status) return UNAVAILABLE;
  const lines = ["Sources:"];
  const sources = list(status.sources);
  if (sources.length === 0) lines.push("  (none selected)");
  for (const source of sources) {
    const detail = source?.detail ? " — " + clip(source.detail, 120) : "";
    lines.push("  " + mark(source?.state) + " " + clip(source?.alias, 32) + " (" + clip(source?.purpose, 32) + ")" + detail);
  }
  lines.push("Executor: " + (status.executor ? clip(status.executor, 32) : "—"));
  lines.push("Quota:");
  const quota = list(status.quota);
  if (quota.length === 0) lines.push("  (unknown)");
  for (const entry of quota) lines.push("  " + quotaLine(entry));
  if (status.session_id) lines.push("Session: " + clip(status.session_id, 64));
  return lines.join("\\n");
}

`;

/** OpenTUI elements for the compact status. */
const VIEWS_PART = `function textLine(content, color) {
  const node = createElement("text");
  if (color) setProp(node, "fg", color);
  insert(node, content);
  return node;
}

function statusBox(lines, theme) {
  const box = createElement("box");
  setProp(box, "flexDirection", "column");
  insert(box, () =>
    lines().map((line) =>
      textLine(line, line.startsWith("✖") || line === UNAVAILABLE ? theme()?.error : theme()?.textMuted),
    ),
  );
  return box;
}

`;

/** The plugin object: polling, the sidebar and home slots, and the /ivoai command. */
const PLUGIN_PART = `export default {
  id: ${JSON.stringify(TUI_PLUGIN_ID)},
  tui: async (api) => {
    // null until the first answer, undefined when the status cannot be read.
    const [status, setStatus] = createSignal(null);
    let stopped = false;
    const refresh = async () => {
      try {
        setStatus(await fetchStatus());
      } catch {
        setStatus(undefined);
      }
    };
    const timer = setInterval(() => {
      if (!stopped) void refresh();
    }, POLL_MS);
    timer.unref?.();
    api.lifecycle?.onDispose?.(() => {
      stopped = true;
      clearInterval(timer);
    });
    void refresh();

    const lines = () => compactLines(status());
    const theme = () => api.theme?.current;
    api.slots.register({
      order: 50,
      slots: {
        sidebar_content: () => statusBox(lines, theme),
        home_bottom: () => statusBox(lines, theme),
      },
    });

    const openPanel = async () => {
      await refresh();
      api.ui.dialog.replace(() =>
        createComponent(api.ui.DialogAlert, {
          title: "ivoai",
          message: panelText(status()),
          onConfirm: () => api.ui.dialog.clear(),
        }),
      );
    };
    const command = {
      name: "ivoai.status",
      title: "ivoai status",
      slashName: "ivoai",
      category: "ivoai",
      namespace: "palette",
      run() {
        void openPanel().catch(() => undefined);
      },
    };
    if (api.keymap?.registerLayer) {
      api.keymap.registerLayer({ commands: [command] });
    } else {
      api.command?.register(() => [
        { title: command.title, value: command.name, category: "ivoai", slash: { name: "ivoai" }, onSelect: command.run },
      ]);
    }
  },
};
`;
