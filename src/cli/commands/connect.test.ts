// `connect server add` in process with fakes for the person and the server only: the flags reach the enrollment
// typed, and a refused flag spends nothing (the single-use code is not even read).
import { describe, expect, it } from "vitest";
import type { AddServerInput } from "../../client/connections/connect.js";
import { group, runInProcess } from "../invoke.test-kit.js";
import { type ConnectAddDeps, createConnectAddCommand } from "./connect.js";

function fakeDeps(added: AddServerInput[], reads: boolean[]): ConnectAddDeps {
  return {
    readCode: async (fromStdin) => {
      reads.push(fromStdin);
      return "ivoai_enr_code";
    },
    addServer: async (_env, input) => {
      added.push(input);
      const profile = {
        alias: input.alias,
        id: "srv_1",
        url: input.url,
        purpose: input.purpose ?? input.alias,
      };
      return { profile, warnings: ["memory probe failed"] } as unknown as Awaited<
        ReturnType<ConnectAddDeps["addServer"]>
      >;
    },
  };
}

const run = (deps: ConnectAddDeps, argv: string[]) =>
  runInProcess([group("connect", [group("server", [createConnectAddCommand(deps)])])], argv);

describe("connect server add through its deps", () => {
  it("enrolls with the flags typed (priority a number) and the code from stdin", async () => {
    const added: AddServerInput[] = [];
    const reads: boolean[] = [];
    const { code, stdout, stderr } = await run(fakeDeps(added, reads), [
      ...["connect", "server", "add", "acme", "--url", "https://ai.acme.example"],
      ...["--priority", "20", "--redundancy-group", "acme-prod", "--code-stdin"],
    ]);
    expect(code).toBe(0);
    expect(reads).toEqual([true]);
    expect(added).toEqual([
      {
        alias: "acme",
        url: "https://ai.acme.example",
        code: "ivoai_enr_code",
        redundancyGroup: "acme-prod",
        priority: 20,
      },
    ]);
    expect(stdout).toBe("connected acme (srv_1) at https://ai.acme.example for purpose acme\n");
    expect(stderr).toBe("warning: memory probe failed\n");
  });

  it("refuses a missing --url and a --priority such as 1e1 before the code is read", async () => {
    const added: AddServerInput[] = [];
    const reads: boolean[] = [];
    const deps = fakeDeps(added, reads);
    await expect(run(deps, ["connect", "server", "add", "acme", "--code-stdin"])).rejects.toThrow(
      'option "--url" is required',
    );
    for (const priority of ["1e1", "0x10", "-1", "1000001"]) {
      await expect(
        run(deps, [
          "connect",
          "server",
          "add",
          "acme",
          "--url",
          "https://a.example",
          `--priority=${priority}`,
        ]),
      ).rejects.toThrow(`invalid --priority "${priority}": expected an integer from 0 to 1000000`);
    }
    expect(reads).toEqual([]);
    expect(added).toEqual([]);
  });
});
