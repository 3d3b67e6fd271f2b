// A corpus that teaches one synonym pair: "automobile" and "car" never share a document, but both go with
// "engine" and "wheel", which a third of the documents hold (too common for the lexical index's feedback terms,
// which would otherwise find the pair by co-occurrence too); eight other topics make the rest. Each document is
// named by a word of its own.

const TOPICS = [
  "invoice payment billing refund",
  "vacation holiday beach hotel",
  "garden soil compost seed",
  "piano violin melody concert",
  "doctor patient clinic medicine",
  "river bridge canal harbour",
  "python compiler syntax debugger",
  "bread flour oven dough",
];

/** A distinct made-up word per document (its file name and its own term). */
export function ownWord(index: number): string {
  const letters = "bcdfghjklmnpqrstvwxz";
  return `zo${letters[Math.floor(index / letters.length) % letters.length]}${letters[index % letters.length]}a`;
}

/** The documents (path → Markdown) and the car document a query for "automobile" should find by meaning. */
export function synonymCorpus(): { files: Record<string, string>; target: string } {
  const files: Record<string, string> = {};
  let index = 0;
  const add = (text: string) => {
    const word = ownWord(index++);
    files[`${word}.md`] = `${text} ${word}.\n`;
    return `${word}.md`;
  };
  for (let i = 0; i < 12; i++) add("Automobile engine wheel");
  const target = add("Car engine wheel");
  for (let i = 1; i < 12; i++) add("Car engine wheel");
  for (const topic of TOPICS) for (let i = 0; i < 6; i++) add(topic);
  return { files, target };
}
