import { describe, expect, it } from "vitest";
import { serverPaths } from "../../config/server-paths.js";
import { planSystemdApply } from "./systemd-apply.js";
import { renderSystemdUnits, type SystemdRenderOptions } from "./systemd-units.js";

const base: SystemdRenderOptions = {
  root: "/",
  nodePath: "/usr/bin/node",
  entryPath: "/usr/lib/node_modules/ivoai/dist/ivoai.mjs",
  version: "1.2.3",
};
/** The values a directive takes in the unit, in order. */
const directive = (content: string, name: string) =>
  content
    .split("\n")
    .filter((line) => line.startsWith(`${name}=`))
    .map((line) => line.slice(name.length + 1));

describe("renderSystemdUnits", () => {
  it("renders one hardened unit running the installed entry as ivoai-gateway:ivoai", () => {
    const render = renderSystemdUnits(base);
    expect(render.units.map((unit) => unit.name)).toEqual(["ivoai-gateway.service"]);
    const unit = render.units[0]?.content ?? "";
    expect(directive(unit, "ExecStart")).toEqual([
      "/usr/bin/node /usr/lib/node_modules/ivoai/dist/ivoai.mjs server start --root /",
    ]);
    expect(directive(unit, "User")).toEqual(["ivoai-gateway"]);
    expect(directive(unit, "Group")).toEqual(["ivoai"]);
    for (const [name, value] of [
      ["Restart", "on-failure"],
      ["NoNewPrivileges", "yes"],
      ["UMask", "0077"],
      ["CapabilityBoundingSet", ""],
      ["AmbientCapabilities", ""],
      ["ProtectProc", "invisible"],
      ["PrivateTmp", "yes"],
      ["ProtectSystem", "strict"],
      ["ProtectHome", "yes"],
    ] as const) {
      expect(directive(unit, name), name).toEqual([value]);
    }
    // V8's JIT needs writable executable memory.
    expect(directive(unit, "MemoryDenyWriteExecute")).toEqual([]);
    // Production: /var/lib/ivoai only; /run/ivoai is systemd's runtime directory (a tmpfs emptied at boot).
    expect(directive(unit, "ReadWritePaths")).toEqual(["/var/lib/ivoai"]);
    expect(directive(unit, "RuntimeDirectory")).toEqual(["ivoai"]);
    expect(unit).toContain("# One unit and one user.");
    expect(render.warnings).toEqual([]);
  });

  it("limits writes to the root's own data, run dir and log directory", () => {
    const render = renderSystemdUnits({ ...base, root: "/srv/ivoai", logFile: "/var/log/ivoai/server.log" });
    const unit = render.units[0]?.content ?? "";
    expect(directive(unit, "ReadWritePaths")).toEqual([
      "/srv/ivoai/var/lib/ivoai /srv/ivoai/run/ivoai /var/log/ivoai",
    ]);
    expect(directive(unit, "RuntimeDirectory")).toEqual([]);
    expect(directive(unit, "ExecStart")[0]).toMatch(
      / --root \/srv\/ivoai --log-file \/var\/log\/ivoai\/server\.log$/,
    );
  });

  it("warns about paths the sandbox would hide, and relaxes ProtectHome for an install in a home", () => {
    expect(renderSystemdUnits({ ...base, root: "/tmp/ivoai" }).warnings).toEqual([
      "/tmp/ivoai is under a temporary directory, which PrivateTmp=yes hides from the service",
    ]);
    const home = renderSystemdUnits({
      ...base,
      entryPath: "/home/ops/.npm-global/lib/node_modules/ivoai/dist/ivoai.mjs",
    });
    expect(directive(home.units[0]?.content ?? "", "ProtectHome")).toEqual(["read-only"]);
  });

  it("refuses paths systemd would split or expand", () => {
    expect(() => renderSystemdUnits({ ...base, root: "/srv/my ivoai" })).toThrow(
      /--root '\/srv\/my ivoai' must be/,
    );
    expect(() => renderSystemdUnits({ ...base, entryPath: "/opt/%h/ivoai.mjs" })).toThrow(/ivoai entry/);
    expect(() => renderSystemdUnits({ ...base, nodePath: "node" })).toThrow(/node binary/);
    expect(() => renderSystemdUnits({ ...base, root: "/srv/../etc" })).toThrow(/--root/);
  });
});

describe("planSystemdApply", () => {
  it("creates the no-login system user before owning the tree, then installs and enables the unit", () => {
    const render = renderSystemdUnits(base);
    const steps = planSystemdApply(render, serverPaths("/"), "/var/log/ivoai/server.log");
    const summary = steps.map((step) =>
      step.kind === "run"
        ? `run ${step.argv.join(" ")}${step.unless ? ` unless ${step.unless.join(" ")}` : ""}`
        : step.kind === "own"
          ? `own ${step.path} ${step.user}:${step.group}${step.mode === undefined ? "" : ` ${step.mode.toString(8)}`}${step.recursive ? " -R" : ""}`
          : step.kind === "logdir"
            ? `logdir ${step.path} ${step.user}:${step.group} ${step.mode.toString(8)}`
            : `${step.kind} ${step.path}`,
    );
    expect(summary).toEqual([
      "run groupadd --system ivoai unless getent group ivoai",
      "run useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --gid ivoai ivoai-gateway unless getent passwd ivoai-gateway",
      "own /etc/ivoai root:ivoai 750",
      "own /etc/ivoai/server.toml root:ivoai 640",
      "own /etc/ivoai/secrets ivoai-gateway:ivoai 700 -R",
      "own /var/lib/ivoai ivoai-gateway:ivoai -R",
      "own /run/ivoai ivoai-gateway:ivoai -R",
      "logdir /var/log/ivoai ivoai-gateway:ivoai 700",
      "install /etc/systemd/system/ivoai-gateway.service",
      "run systemctl daemon-reload",
      "run systemctl enable --now ivoai-gateway.service",
    ]);
  });

  it("refuses a log file outside a directory of ivoai's own, and creates only that directory", () => {
    const render = renderSystemdUnits(base);
    for (const logFile of ["/var/log/ivoai.log", "/etc/x.log", "/etc/ivoai/server.log", "/ivoai.log"]) {
      expect(() => planSystemdApply(render, serverPaths("/"), logFile), logFile).toThrow(
        `--log-file '${logFile}' must be in a directory of its own named ivoai (e.g. /var/log/ivoai/server.log)`,
      );
      expect(() => renderSystemdUnits({ ...base, logFile }), logFile).toThrow(/directory of its own/);
    }
    const steps = planSystemdApply(render, serverPaths("/"), "/var/log/ivoai/server.log");
    const touched = steps.flatMap((step) => (step.kind === "run" || step.kind === "install" ? [] : [step]));
    expect(touched.filter((step) => step.path.startsWith("/var/log"))).toEqual([
      { kind: "logdir", path: "/var/log/ivoai", user: "ivoai-gateway", group: "ivoai", mode: 0o700 },
    ]);
  });
});
