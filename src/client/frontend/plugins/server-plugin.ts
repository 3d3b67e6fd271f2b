// The OpenCode server plugin ivoai writes into the managed frontend's config: plain ESM, no npm install at runtime.
// OpenCode 1.18.33 triggers `chat.headers` before every model request with {sessionID, agent, model, provider,
// message} (message = the user message being answered); the headers it returns are added to the provider request.

/** The plugin's id in OpenCode (file plugins must export one). */
export const SERVER_PLUGIN_ID = "ivoai.frontend-ids";
/** Header carrying OpenCode's (non-secret) session id on every bridge request. */
export const FRONTEND_SESSION_HEADER = "x-ivoai-frontend-session";
/** Header carrying the id of the user message being answered. */
export const FRONTEND_MESSAGE_HEADER = "x-ivoai-frontend-message";

/** The plugin source; only requests to `providerId` (ivoai's bridge) get the headers. */
export function serverPluginSource(providerId: string): string {
  return `// Written by ivoai: attaches the frontend session and message ids to requests to ivoai's bridge.
const PROVIDER = ${JSON.stringify(providerId)};
const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export default {
  id: ${JSON.stringify(SERVER_PLUGIN_ID)},
  server: async () => ({
    "chat.headers": async (input, output) => {
      if (input?.model?.providerID !== PROVIDER || !output?.headers) return;
      const session = input.sessionID;
      const message = input.message?.id;
      if (typeof session === "string" && ID_PATTERN.test(session)) {
        output.headers[${JSON.stringify(FRONTEND_SESSION_HEADER)}] = session;
      }
      if (typeof message === "string" && ID_PATTERN.test(message)) {
        output.headers[${JSON.stringify(FRONTEND_MESSAGE_HEADER)}] = message;
      }
    },
  }),
};
`;
}
