// The consent page: who is asking (client name, redirect host), what for (scopes), and the activation code.

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] as string,
  );

export function consentPage(input: {
  requestId: string;
  csrf: string;
  clientName: string;
  redirectHost: string;
  scopes: readonly string[];
  error?: string;
}): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>ivoai — allow access?</title>
<style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1b1f}
.box{border:1px solid #ccd;border-radius:8px;padding:1.2rem}code{background:#eef;padding:0 .3rem;border-radius:3px}
.error{color:#a30000}button{padding:.5rem 1.1rem;margin-right:.6rem}input{padding:.4rem;width:100%;box-sizing:border-box}</style></head>
<body><div class="box">
<h1>Allow access to ivoai?</h1>
<p><strong>${escapeHtml(input.clientName)}</strong> wants to use this organisation's ivoai knowledge and will be sent back to
<code>${escapeHtml(input.redirectHost)}</code>.</p>
<p>It asks for: ${input.scopes.map((scope) => `<code>${escapeHtml(scope)}</code>`).join(" ")}</p>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ""}
<form method="post" action="/oauth/authorize">
<input type="hidden" name="request_id" value="${escapeHtml(input.requestId)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrf)}">
<label for="activation_code">Activation code (from <code>ivoai server activation create</code>)</label>
<p><input id="activation_code" name="activation_code" autocomplete="off" required></p>
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</form></div></body></html>`;
}

export function errorPage(message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ivoai — authorization error</title></head>
<body style="font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto"><h1>Authorization error</h1><p>${escapeHtml(message)}</p></body></html>`;
}
