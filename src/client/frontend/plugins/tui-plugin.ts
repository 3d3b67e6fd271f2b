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
  return [settingsPart(endpoint), LIMITS_PART, HELPERS_PART, TEXT_PART, VIEWS_PART, PLUGIN_PART].join("");
}

/**
 * The plugin's plain text functions alone (no imports, no settings), as the plugin has them: tests load this as a
 * module to check what the TUI draws for a status (`compactLines`, `panelText`, `autoLine`, `duration`).
 */
export function tuiPluginTextSource(): string {
  return [LIMITS_PART, HELPERS_PART, TEXT_PART].join("");
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

`;
}

/** How often the status is read (more often while an AUTO turn runs), and the bounds of what is drawn. */
const LIMITS_PART = `const POLL_MS = 5000;
const BUSY_POLL_MS = 2000;
const FETCH_TIMEOUT_MS = 2000;
const MAX_ITEMS = 32;
const MAX_RUNNING_IN_LINE = 3;
const UNAVAILABLE = "ivoai status unavailable";
const LOADING = "ivoai status loading…";

`;

/** Bounded, control-free text from untrusted status fields, and the status fetch itself. */
const HELPERS_PART = `// C0 and C1 controls, DEL, bidi marks, embeddings, overrides and isolates: none reaches the screen.
const UNSAFE = /[\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]/g;
const clip = (value, max) => {
  const text = String(value ?? "").replace(UNSAFE, " ");
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
};
const list = (value) => (Array.isArray(value) ? value.slice(0, MAX_ITEMS) : []);
const count = (value) => (typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.floor(value)) : 0);
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

/** 45s, 1m20s, 2h05m. */
function duration(ms) {
  const seconds = Math.floor(count(ms) / 1000);
  if (seconds < 60) return seconds + "s";
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return minutes + "m" + String(seconds % 60).padStart(2, "0") + "s";
  return Math.floor(minutes / 60) + "h" + String(minutes % 60).padStart(2, "0") + "m";
}

/** 950, 12.3k, 1.2M. */
function tokens(value) {
  const n = count(value);
  return n < 1000 ? String(n) : n < 1e6 ? (n / 1000).toFixed(1) + "k" : (n / 1e6).toFixed(1) + "M";
}

`;

/** The compact sidebar lines and the /ivoai panel's text. */
const TEXT_PART = `/** The AUTO turn in one line: "AUTO 3/12 · running t4, t5 · 1m20s", or its outcome ("AUTO done 12/12 · 2m03s"); null before one. */
function autoLine(auto) {
  if (!auto || typeof auto !== "object") return null;
  const plan = count(auto.total) > 0 ? count(auto.done) + "/" + count(auto.total) : "";
  if (auto.active !== true) {
    // Once ended, n/m counts the tasks that did their work: a stopped plan's cancelled tasks are not "done".
    const outcome = count(auto.total) > 0 ? " " + count(auto.completed) + "/" + count(auto.total) : "";
    return "AUTO " + clip(auto.phase, 16) + outcome + " · " + duration(auto.elapsed_ms);
  }
  const parts = ["AUTO " + (plan || clip(auto.phase, 16))];
  const ids = list(auto.running).slice(0, MAX_RUNNING_IN_LINE).map((task) => clip(task?.id, 16));
  const more = count(auto.running_count) - ids.length;
  if (ids.length > 0) parts.push("running " + ids.join(", ") + (more > 0 ? " +" + more : ""));
  parts.push(duration(auto.elapsed_ms));
  return parts.join(" · ");
}

/** Compact lines: one summary, the AUTO turn, then one line per unhealthy source (symbol and text). */
function compactLines(status) {
  if (status === null) return [LOADING];
  if (!status) return [UNAVAILABLE];
  const sources = list(status.sources);
  const ok = sources.filter((source) => source?.state === "ok").length;
  const lines = ["ivoai · sources " + ok + "/" + sources.length + " connected"];
  const auto = autoLine(status.auto);
  if (auto) lines.push(auto);
  for (const source of sources) {
    if (source?.state !== "ok") lines.push(mark(source?.state) + " " + clip(source?.alias, 32));
  }
  lines.push("executor " + (status.executor ? clip(status.executor, 32) : "—"));
  for (const entry of list(status.quota)) lines.push("quota " + quotaLine(entry));
  return lines;
}

/** The panel's AUTO section: state and progress, the running tasks with their profiles, failovers and tokens. */
function autoPanel(auto) {
  if (!auto || typeof auto !== "object") return ["AUTO: no turn yet"];
  const state = auto.active === true ? "running" : "ended";
  const lines = ["AUTO: " + state + " · phase " + clip(auto.phase, 16)];
  const plan =
    count(auto.total) > 0
      ? count(auto.done) + "/" + count(auto.total) + " tasks ended, " + count(auto.completed) + " done"
      : "no plan tasks";
  lines.push("  Progress: " + plan + " · elapsed " + duration(auto.elapsed_ms) + " · failovers " + count(auto.failovers));
  const running = list(auto.running).map((task) => {
    const profile = [task?.executor, task?.model].filter(Boolean).map((part) => clip(part, 40)).join(" ");
    return clip(task?.id, 40) + (profile ? " (" + profile + ")" : "");
  });
  const more = count(auto.running_count) - running.length;
  if (running.length > 0) lines.push("  Running: " + running.join(", ") + (more > 0 ? " and " + more + " more" : ""));
  const used = auto.tokens ?? {};
  const cost = typeof used.cost_usd === "number" ? " · $" + used.cost_usd.toFixed(used.cost_usd < 1 ? 4 : 2) : "";
  lines.push("  Tokens: " + tokens(used.input) + " in · " + tokens(used.output) + " out" + cost);
  if (auto.active !== true && typeof auto.exit_code === "number") {
    lines.push("  Ended: exit " + count(auto.exit_code) + (auto.error ? " — " + clip(auto.error, 160) : ""));
  }
  return lines;
}

/**
 * The panel's sources: those selected with their live state, then configured, excluded and failed ones, from the
 * last turn's record once a turn has gathered knowledge, from the launcher before.
 */
function sourcesPanel(status) {
  const lines = ["Sources:", "  Selected:"];
  const selected = list(status.sources);
  if (selected.length === 0) lines.push("    (none)");
  for (const source of selected) {
    const detail = source?.detail ? " — " + clip(source.detail, 120) : "";
    lines.push("    " + mark(source?.state) + " " + clip(source?.alias, 32) + " (" + clip(source?.purpose, 32) + ")" + detail);
  }
  const turn = status.auto?.sources && typeof status.auto.sources === "object" ? status.auto.sources : null;
  const known = turn ?? (status.selection && typeof status.selection === "object" ? status.selection : null);
  if (!known) return lines;
  const names = list(known.configured).map((name) => clip(name, 32));
  lines.push("  Configured: " + (names.length > 0 ? names.join(", ") : "(none)"));
  const groups = [["Excluded", known.excluded]];
  if (turn) groups.push(["Failed in the last turn", turn.failed]);
  for (const [title, notes] of groups) {
    const entries = list(notes);
    lines.push("  " + title + ":" + (entries.length === 0 ? " (none)" : ""));
    for (const note of entries) lines.push("    " + clip(note?.alias, 32) + " — " + clip(note?.reason, 120));
  }
  return lines;
}

/** The /ivoai panel: the AUTO turn, every source, the executor, quota and session. */
function panelText(status) {
  if (!status) return UNAVAILABLE;
  const lines = [...autoPanel(status.auto), ...sourcesPanel(status)];
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
      textLine(line, /^(✖|AUTO failed)/.test(line) || line === UNAVAILABLE ? theme()?.error : theme()?.textMuted),
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
    let timer;
    const refresh = async () => {
      try {
        setStatus(await fetchStatus());
      } catch {
        setStatus(undefined);
      }
    };
    // One read at a time; the next is scheduled once this one settled, sooner while an AUTO turn runs.
    const poll = async () => {
      await refresh();
      if (stopped) return;
      timer = setTimeout(poll, status()?.auto?.active === true ? BUSY_POLL_MS : POLL_MS);
      timer.unref?.();
    };
    api.lifecycle?.onDispose?.(() => {
      stopped = true;
      clearTimeout(timer);
    });
    void poll();

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
