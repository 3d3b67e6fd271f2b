// The request handlers an SDK server has installed. The SDK has no public accessor, so this is the one place
// that reads its private map (pinned SDK 1.32.2); the endpoint and router tests fail if it stops finding them.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

export type RawHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/** The server's handlers by method (a live map: setting an entry replaces that handler), if the SDK has one. */
export function requestHandlers(server: Server): Map<string, RawHandler> | undefined {
  return (server as unknown as { _requestHandlers?: Map<string, RawHandler> })._requestHandlers;
}
