// Reading a one-time secret (an enrollment code) from stdin or a no-echo prompt; never from argv.
import { IvoaiError } from "../shared/errors.js";

/** All of standard input, trimmed; `what` names what it holds in the too-large error. */
export async function readStdin(maxBytes = 64 * 1024, what = "an enrollment code"): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) throw new IvoaiError("USAGE", `standard input is too large for ${what}`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8").trim();
}

/** Prompts on the terminal without echoing what is typed. */
export async function promptHidden(question: string): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY)
    throw new IvoaiError("USAGE", "no terminal to prompt on: pass the code with --code-stdin");
  process.stderr.write(question);
  input.setRawMode(true);
  input.resume();
  return new Promise((resolve, reject) => {
    let value = "";
    const done = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off("data", onData);
      process.stderr.write("\n");
      if (error) reject(error);
      else resolve(value.trim());
    };
    const onData = (data: Buffer) => {
      for (const char of data.toString("utf8")) {
        if (char === "\r" || char === "\n") return done();
        if (char === "\u0003") return done(new IvoaiError("USAGE", "cancelled"));
        if (char === "\u007f" || char === "\b") value = value.slice(0, -1);
        else value += char;
      }
    };
    input.on("data", onData);
  });
}
