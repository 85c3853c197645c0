/**
 * The HTML export renders recorded Markdown (headings, lists, code, emphasis),
 * keeps every line break of user and assistant text, sanitises whatever markup a
 * recorded text carries, and shows the terminal's usage figures: the same totals
 * in the same format, and no cost at all where the model has no prices.
 */
import { MemoryStorage, Session } from "@rein/harness";
import { describe, expect, it } from "vitest";
import { sessionHtml } from "../src/export/html.js";
import { usageLine } from "../src/ui/usage-line.js";

const usage = (input: number, output: number, cacheRead: number, cost: number) => ({
  input,
  output,
  cacheRead,
  cacheWrite: 0,
  totalTokens: input + output + cacheRead,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
});

function session(userText: string, answer: string, cost = 0): Session {
  const s = Session.create(new MemoryStorage());
  s.appendMessage({ role: "user", content: userText, timestamp: 1 });
  s.appendMessage({
    role: "assistant",
    content: [{ type: "text", text: answer }],
    api: "faux",
    provider: "faux",
    model: "m",
    usage: usage(1200, 340, 800, cost),
    stopReason: "stop",
    timestamp: 2,
  });
  return s;
}

const main = (html: string) => html.slice(html.indexOf("<main>"), html.indexOf("</main>"));
const text = (html: string) => html.replace(/<[^>]+>/g, "").replace(/&amp;/g, "&");

describe("the HTML export renders Markdown", () => {
  it("headings, lists, emphasis and fenced code become HTML; single line breaks stay breaks", () => {
    const answer = [
      "## Plan",
      "",
      "- **first** step",
      "- second with `inline`",
      "",
      "```ts",
      "const x = 1 < 2;",
      "```",
      "",
      "line one",
      "line two",
    ].join("\n");
    const html = main(sessionHtml(session("first line\nsecond line", answer)));
    expect(html).toContain("<h2>Plan</h2>");
    expect(html).toMatch(
      /<ul>\s*<li><strong>first<\/strong> step<\/li>\s*<li>second with <code>inline<\/code><\/li>/,
    );
    expect(html).toContain('<pre><code class="language-ts">const x = 1 &lt; 2;\n</code></pre>');
    expect(html).toContain("line one<br />line two");
    expect(html).toContain("first line<br />second line");
    expect(html).not.toMatch(/##|\*\*|```/);
  });

  it("sanitises markup in recorded text: no script, handler, frame or javascript: link survives", () => {
    const attack = [
      "<script>alert(1)</script>",
      '<img src=x onerror="alert(2)">',
      "[click](javascript:alert(3))",
      '<a href="javascript:alert(4)">raw</a>',
      '<iframe src="https://evil.example"></iframe>',
      '<p style="position:fixed" onclick="alert(5)">styled</p>',
      "[ok](https://example.com)",
    ].join("\n\n");
    const html = main(sessionHtml(session(attack, attack)));
    for (const bad of [
      "<script",
      "alert(1)",
      "onerror",
      "javascript:",
      "<iframe",
      "onclick",
      "style=",
      "<img",
    ])
      expect(html).not.toContain(bad);
    expect(html).toContain('<a href="https://example.com" rel="noopener noreferrer nofollow">ok</a>');
    expect(html).toContain("styled");
  });
});

describe("the HTML export's usage equals the terminal's", () => {
  it("without prices: the same tokens as the last line, and no cost anywhere", () => {
    const s = session("hi", "hello");
    const html = sessionHtml(s);
    const terminal = usageLine(s, { entries: 0 });
    expect(terminal).toBe("run 2,000 in (800 cached) · 340 out · session 2,000 in (800 cached) · 340 out");
    expect(text(html)).toContain("Usage: 2,000 in (800 cached) · 340 out over 1 model request");
    expect(html).not.toContain("data-cost");
    expect(html).not.toMatch(/Cost|\$0\.0000/);
  });

  it("with prices: the cost the terminal shows, to the same digits", () => {
    const s = session("hi", "hello", 0.0123);
    expect(usageLine(s, { entries: 0 })).toContain("session 2,000 in (800 cached) · 340 out · $0.0123");
    expect(text(sessionHtml(s))).toContain(
      "Usage: 2,000 in (800 cached) · 340 out · Cost $0.0123 over 1 model request",
    );
  });
});
