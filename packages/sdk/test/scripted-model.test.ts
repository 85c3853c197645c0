import { describe, expect, it } from "vitest";
import { createScriptedModel } from "../src/scripted-model.js";

const ask = async (scripted: ReturnType<typeof createScriptedModel>) => {
  const reply = await scripted.models.complete(scripted.model, {
    messages: [{ role: "user", content: "next", timestamp: 0 }],
  });
  return reply.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
};

describe("scripted model: skip(n) resumes a script after the replies a session already holds", () => {
  it("skips from the start, then from wherever the script is", async () => {
    const scripted = createScriptedModel(["one", "two", "three", "four", "five"]);
    try {
      scripted.skip(1);
      expect(await ask(scripted)).toBe("two");
      scripted.skip(1);
      expect(await ask(scripted)).toBe("four");
      expect(scripted.pending()).toBe(1);
      scripted.append(["six"]);
      scripted.skip(0);
      expect(await ask(scripted)).toBe("five");
      expect(await ask(scripted)).toBe("six");
    } finally {
      scripted.dispose();
    }
  });

  it("skipping past the end leaves nothing, and a bad count is refused", async () => {
    const scripted = createScriptedModel(["one"]);
    try {
      expect(() => scripted.skip(-1)).toThrow(RangeError);
      scripted.skip(5);
      expect(scripted.pending()).toBe(0);
    } finally {
      scripted.dispose();
    }
  });
});

describe("scripted model: a long-lived host keeps only what is still to come", () => {
  it("skip after appends counts from the unconsumed replies, whatever was consumed before", async () => {
    const scripted = createScriptedModel(["one", "two"]);
    try {
      expect(await ask(scripted)).toBe("one");
      scripted.append(["three", "four"]);
      expect(await ask(scripted)).toBe("two");
      scripted.append(["five"]);
      scripted.skip(1);
      expect(scripted.pending()).toBe(2);
      expect(await ask(scripted)).toBe("four");
      expect(await ask(scripted)).toBe("five");
    } finally {
      scripted.dispose();
    }
  });

  it("forgetRequests empties the recorded requests; later ones are recorded again", async () => {
    const scripted = createScriptedModel(["one", "two"]);
    try {
      await ask(scripted);
      expect(scripted.requests).toHaveLength(1);
      scripted.forgetRequests();
      expect(scripted.requests).toHaveLength(0);
      await ask(scripted);
      expect(scripted.requests).toHaveLength(1);
    } finally {
      scripted.dispose();
    }
  });
});
