// What the rest of AUTO may import from the quota manager.
export {
  type ContextPressure,
  contextPressure,
  createQuotaManager,
  DEFAULT_HEADROOM_PERCENT,
  type QuotaManager,
  type QuotaManagerOptions,
  type QuotaRefresh,
} from "./admission.js";
export { parseStatuslinePayload, statusLineText } from "./claude-statusline.js";
export { type CodexModel, type CodexProbe, NOT_LOGGED_IN, probeCodexAppServer } from "./codex-app-server.js";
export { recordStatusline } from "./statusline-hook.js";
export { openQuotaStore, type QuotaStore } from "./store.js";
