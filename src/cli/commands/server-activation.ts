// `ivoai server activation create`: a short-lived single-use code a person types on the OAuth consent page.
import { openOAuthStoreOf } from "../../server/oauth/store-open.js";
import { newSecret } from "../../shared/tokens.js";
import { defineCommand, type GroupSpec } from "../command.js";
import { ROOT_OPTION, requireServerTree } from "./server-common.js";

const createCommand = defineCommand({
  name: "create",
  summary: "Create a single-use activation code for the Web MCP consent page (printed once)",
  json: true,
  options: {
    ...ROOT_OPTION,
    ttl: { type: "duration", default: "10m", max: "1h", description: "lifetime" },
  },
  async run(ctx) {
    const ttlMs = ctx.options.ttl;
    const paths = await requireServerTree(ctx, ["oauthDir"]);
    const store = await openOAuthStoreOf(paths);
    try {
      const code = newSecret("ivoai_act_");
      const at = new Date();
      const expires_at = new Date(at.getTime() + ttlMs).toISOString();
      const id = await store.addActivationCode(code, expires_at, at.toISOString());
      ctx.out.data(
        { id, code, expires_at },
        (v) => `activation ${v.id} (expires ${v.expires_at}), single use:\n${v.code}`,
      );
    } finally {
      await store.close();
    }
    return 0;
  },
});

export const serverActivationGroup: GroupSpec = {
  kind: "group",
  name: "activation",
  summary: "Activation codes for connecting ChatGPT or Claude on the web",
  children: [createCommand],
};
