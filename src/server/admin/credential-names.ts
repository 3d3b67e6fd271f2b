// Credential id → a name a person recognises: audit events and approval requests carry credential ids only.
import type { EnrollmentService } from "../enrollment/service.js";
import type { OAuthStore } from "../oauth/store.js";

/** Where credential names live: enrolled clients and Web MCP (OAuth) clients; either may be absent. */
export interface CredentialNamesDeps {
  enrollment?: Pick<EnrollmentService, "listClients"> | undefined;
  oauth?: Pick<OAuthStore, "listClients"> | undefined;
}

/** Credential id → name: an enrolled client's name, a Web MCP client's registered name (`oauth:<client_id>`). */
export async function credentialNames(deps: CredentialNamesDeps): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const client of (await deps.enrollment?.listClients()) ?? []) names.set(client.id, client.name);
  for (const client of (await deps.oauth?.listClients()) ?? [])
    names.set(`oauth:${client.client_id}`, client.client_name ?? client.client_id);
  return names;
}
