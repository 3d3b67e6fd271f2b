import { describe, expect, it } from "vitest";
import { sourceSelection } from "./source-selection.js";

const profile = (id: string, enabled = true, credentialed = true) => ({
  id,
  alias: `${id}-alias`,
  enabled,
  credentialed,
});

describe("sourceSelection", () => {
  it("lists the enabled servers and says why each unselected one is left out", () => {
    const profiles = [profile("a"), profile("b"), profile("off", false), profile("bare", true, false)];
    expect(sourceSelection(profiles, new Set(["a"]), true)).toEqual({
      configured: ["a-alias", "b-alias", "bare-alias"],
      excluded: [
        { alias: "b-alias", reason: "not named by --knowledge-source" },
        { alias: "off-alias", reason: "disabled" },
        { alias: "bare-alias", reason: "no stored credential; connect it again" },
      ],
    });
  });

  it("without a selection, an enabled server left out was not ready; the lists are bounded", () => {
    expect(sourceSelection([profile("a")], new Set(), false).excluded).toEqual([
      { alias: "a-alias", reason: "not ready when the session started" },
    ]);
    const many = Array.from({ length: 40 }, (_, index) => profile(`s${index}`));
    const bounded = sourceSelection(many, new Set(), true);
    expect(bounded.configured).toHaveLength(16);
    expect(bounded.excluded).toHaveLength(16);
  });
});
