// ivoai's two OpenCode plugins for the managed frontend and the config that loads them (OpenCode 1.18.33): the
// server plugin by the `plugin` array of the OpenCode config, the TUI plugin by the `plugin` array of the TUI config
// (OPENCODE_TUI_CONFIG), both as `file://` URLs of files ivoai writes, so nothing is installed at runtime.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { writeFileAtomic } from "../../../shared/atomic-file.js";
import { IvoaiError } from "../../../shared/errors.js";
import { serverPluginSource } from "./server-plugin.js";
import { type StatusEndpoint, tuiPluginSource } from "./tui-plugin.js";

export { type AutoProgress, createAutoProgress } from "./auto-progress.js";
export { FRONTEND_MESSAGE_HEADER, FRONTEND_SESSION_HEADER, SERVER_PLUGIN_ID } from "./server-plugin.js";
export { type SourceSelection, sourceSelection } from "./source-selection.js";
export {
  type AutoStatus,
  type SourceState,
  type StatusServer,
  type StatusSnapshot,
  startStatusServer,
} from "./status.js";
export { type StatusEndpoint, TUI_PLUGIN_ID } from "./tui-plugin.js";

export const SERVER_PLUGIN_FILE = "ivoai-frontend-ids.js";
export const TUI_PLUGIN_FILE = "ivoai-status.js";

export interface PluginFile {
  name: string;
  content: string;
}

/** The plugin files for a session; `providerId` is the OpenCode provider key of ivoai's bridge. */
export function pluginFiles(status: StatusEndpoint, providerId = "ivoai"): PluginFile[] {
  if (!/^[A-Z_][A-Z0-9_]{0,63}$/.test(status.statusTokenEnv))
    throw new IvoaiError("USAGE", "invalid environment variable name for the status token");
  const url = URL.canParse(status.statusUrl) ? new URL(status.statusUrl) : undefined;
  if (url?.protocol !== "http:" || url.hostname !== "127.0.0.1" || url.username || url.password)
    throw new IvoaiError("USAGE", "the status endpoint must be a plain http://127.0.0.1 URL");
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(providerId))
    throw new IvoaiError("USAGE", "invalid OpenCode provider id");
  return [
    { name: SERVER_PLUGIN_FILE, content: serverPluginSource(providerId) },
    { name: TUI_PLUGIN_FILE, content: tuiPluginSource(status) },
  ];
}

/** Writes the plugin files into `dir` (which must exist, private to the user). */
export async function writePluginFiles(dir: string, files: readonly PluginFile[]): Promise<void> {
  for (const file of files) await writeFileAtomic(path.join(dir, file.name), file.content, { mode: 0o600 });
}

/** Config fragments loading the plugins written in `dir`: merge `opencode` into the OpenCode config, `tui` into the TUI config. */
export function pluginConfig(dir: string): { opencode: { plugin: string[] }; tui: { plugin: string[] } } {
  const url = (name: string) => pathToFileURL(path.join(path.resolve(dir), name)).href;
  return { opencode: { plugin: [url(SERVER_PLUGIN_FILE)] }, tui: { plugin: [url(TUI_PLUGIN_FILE)] } };
}
