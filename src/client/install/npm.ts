// Runs npm for the installer: a minimal environment (no user or provider credentials, a private HOME and
// npm user and global config), a time bound and a cap on the output it keeps.
import { spawn } from "node:child_process";
import path from "node:path";
import { IvoaiError } from "../../shared/errors.js";

export interface NpmRunOptions {
  cwd: string;
  /** ivoai's private npm home (HOME, npmrc and cache live under it). */
  npmHome: string;
  /** The caller's environment: only PATH, locale, proxy, CA and registry settings are taken from it. */
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
  maxOutputBytes?: number;
}

const PASSED = [
  "PATH",
  "LANG",
  "LC_ALL",
  "TZ",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "NODE_EXTRA_CA_CERTS",
];

/** The empty global npmrc npm is pointed at, under ivoai's private npm home. */
export const globalNpmrc = (npmHome: string) => path.join(npmHome, "global-npmrc");

/** The whole environment npm (and an allowed install script) sees. */
export function minimalNpmEnv(env: NodeJS.ProcessEnv, npmHome: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PASSED) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  const registry = env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY;
  return {
    ...out,
    HOME: npmHome,
    npm_config_userconfig: path.join(npmHome, ".npmrc"),
    // Not $PREFIX/etc/npmrc: a global npmrc can hold an _authToken.
    npm_config_globalconfig: globalNpmrc(npmHome),
    npm_config_cache: path.join(npmHome, "cache"),
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    ...(registry && /^https?:\/\/[^@\s]+$/.test(registry) ? { npm_config_registry: registry } : {}),
  };
}

/** Runs `npm ARGS`; fails with the tail of npm's output (bounded) on a non-zero exit or the time bound. */
export function runNpm(args: readonly string[], options: NpmRunOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 15 * 60_000;
  const maxOutput = options.maxOutputBytes ?? 256 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn("npm", [...args], {
      cwd: options.cwd,
      env: minimalNpmEnv(options.env, options.npmHome),
      stdio: ["ignore", "pipe", "pipe"],
      timeout: timeoutMs,
      killSignal: "SIGKILL",
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (output.length > maxOutput) output = output.slice(-maxOutput);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (error) =>
      reject(new IvoaiError("NOT_FOUND", `cannot run npm (${error.message}): install Node.js with npm`)),
    );
    child.on("close", (code, signal) => {
      if (code === 0) return resolve(output);
      const tail = output.trim().split("\n").slice(-3).join(" | ");
      const why = signal ? `stopped after ${Math.round(timeoutMs / 1000)} s (${signal})` : `exit ${code}`;
      reject(new IvoaiError("INTERNAL", `npm ${args[0]} failed (${why}): ${tail}`));
    });
  });
}
