// The Web MCP OAuth flow as a client and a person would do it: register, consent with an activation code, exchange.
import { createHash, randomBytes } from "node:crypto";

export const TEST_REDIRECT = "http://127.0.0.1:33418/callback";

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** A scripted browser on the consent page: reads the form, types the activation code, presses a button. */
export async function answerConsent(
  issuer: string,
  authorizeUrl: string,
  activationCode: string,
  decision = "allow",
  headers: Record<string, string> = {},
): Promise<Response> {
  const html = await (await fetch(authorizeUrl, { redirect: "manual", headers })).text();
  const value = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? "";
  return fetch(`${issuer}/oauth/authorize`, {
    method: "POST",
    redirect: "manual",
    headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      request_id: value("request_id"),
      csrf_token: value("csrf_token"),
      activation_code: activationCode,
      decision,
    }),
  });
}

export async function obtainTokens(
  issuer: string,
  activationCode: string,
  scope?: string,
  headers: Record<string, string> = {},
): Promise<{
  client_id: string;
  code: string;
  verifier: string;
  tokens: { access_token: string; refresh_token: string; scope: string };
}> {
  const registered = await fetch(`${issuer}/oauth/register`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [TEST_REDIRECT], client_name: "Test Connector" }),
  });
  const { client_id } = (await registered.json()) as { client_id: string };
  const { verifier, challenge } = pkcePair();
  const url = `${issuer}/oauth/authorize?${new URLSearchParams({
    response_type: "code",
    client_id,
    redirect_uri: TEST_REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: `${issuer}/mcp`,
    state: "st-123",
    ...(scope ? { scope } : {}),
  })}`;
  const answer = await answerConsent(issuer, url, activationCode, "allow", headers);
  const code = new URL(answer.headers.get("location") as string).searchParams.get("code") as string;
  const response = await fetch(`${issuer}/oauth/token`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: TEST_REDIRECT,
      client_id,
      code_verifier: verifier,
      resource: `${issuer}/mcp`,
    }),
  });
  return {
    client_id,
    code,
    verifier,
    tokens: (await response.json()) as { access_token: string; refresh_token: string; scope: string },
  };
}
