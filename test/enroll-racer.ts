// One enrollment attempt from a separate OS process, for the race tests; the code travels on stdin, never in argv.
import { spawn } from "node:child_process";

/** Posts `code` to `url`/v1/enroll from a new node process and resolves with its status and body. */
export function racer(url: string, code: string): Promise<{ status: number; body: string }> {
  const script = `
    let code = "";
    process.stdin.on("data", (c) => (code += c));
    process.stdin.on("end", async () => {
      const r = await fetch(process.env.TARGET + "/v1/enroll", {
        method: "POST", headers: { "content-type": "application/json" },
        body: JSON.stringify({ code, client_name: "racer" }),
      });
      process.stdout.write(JSON.stringify({ status: r.status, body: await r.text() }));
    });`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", script], { env: { ...process.env, TARGET: url } });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", reject);
    child.on("close", (exit) =>
      exit === 0 ? resolve(JSON.parse(out)) : reject(new Error(`racer exited ${exit}`)),
    );
    child.stdin.end(code);
  });
}
