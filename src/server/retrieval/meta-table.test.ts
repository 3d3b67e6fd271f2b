import { describe, expect, it } from "vitest";
import { MetaTable, metaTableOf } from "./meta-table.js";

describe("meta table", () => {
  it("stores consecutive equal metadata once and finds each key's, also past its first growth and when restored", () => {
    const table = new MetaTable<{ doc: string; page?: number }>();
    for (let key = 1; key <= 1500; key++) table.push(key * 2, { doc: key <= 1000 ? "a" : "b" });
    table.push(4000, { doc: "a" });
    expect(table.values).toEqual([{ doc: "a" }, { doc: "b" }, { doc: "a" }]);
    expect([table.get(2000)?.doc, table.get(2002)?.doc, table.get(4000)?.doc, table.get(3)]).toEqual([
      "a",
      "b",
      "a",
      undefined,
    ]);
    const restored = metaTableOf<{ doc: string }>({
      metaKeys: table.keys.slice(0, table.length),
      metaIds: table.ids.slice(0, table.length),
      metas: table.values,
    });
    restored.push(5000, { doc: "a" });
    expect([restored.length, restored.values.length, restored.get(3000)?.doc]).toEqual([1502, 3, "b"]);
    expect(restored.at(restored.indexOf(5000))).toEqual({ doc: "a" });
  });
});
