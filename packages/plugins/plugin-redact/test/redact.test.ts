import { defineTool, Type } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import { BUILTIN_PATTERNS, createRedactor, createRedactPlugin, redactDeep } from "../src/index.js";

// Fake secrets of the right shapes, built at run time so no scanner flags this file.
const OPENAI = `sk-${"proj-"}${"A1b2C3d4E5f6G7h8I9j0".repeat(2)}`;
const GITHUB = `ghp_${"a".repeat(36)}`;
const AWS = `AKIA${"IOSFODNN7EXAMPLE"}`;
const SLACK = `xoxb-${"1234567890"}-abcdefghij`;
const JWT = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${"dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"}`;
const PEM = [
  "-----BEGIN RSA PRIVATE KEY-----",
  "MIIEowIBAAKCAQEA7Vd",
  "bm90IGEga2V5",
  "-----END RSA PRIVATE KEY-----",
].join("\n");
const DB_PASSWORD = "correct-horse-battery-staple";

const SECRETS = [OPENAI, GITHUB, AWS, SLACK, JWT, "MIIEowIBAAKCAQEA7Vd", DB_PASSWORD, "ACME-123456"];

const leaky = defineTool({
  name: "leaky",
  description: "Prints configuration",
  risk: "read",
  parameters: Type.Object({}),
  execute: () => ({
    content: [
      {
        type: "text",
        text: [
          `OPENAI_API_KEY=${OPENAI}`,
          `token: ${GITHUB}`,
          `aws ${AWS} slack ${SLACK}`,
          `Authorization: Bearer ${JWT}`,
          PEM,
          `DATABASE_URL=postgres://app:${DB_PASSWORD}@db/app`,
          "customer ACME-123456",
          "nothing secret here: HOME=/home/me",
        ].join("\n"),
      },
    ],
    details: { env: { DB_PASSWORD }, lines: [`key ${OPENAI}`], count: 3 },
  }),
});

const env = { DB_PASSWORD, HOME: "/home/me", SHORT_TOKEN: "abc", PATH: "/usr/bin:/bin" };

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

describe("redaction in a run", () => {
  it("the model's next request and the session never contain the secrets", async () => {
    t = await createTestHarness({
      plugins: [
        [createRedactPlugin({ env }), { patterns: [{ name: "customer-id", pattern: "ACME-\\d{6}" }] }],
      ],
      tools: [leaky],
      script: [{ toolCalls: [{ name: "leaky", args: {} }] }, "done"],
    });
    expect((await t.prompt("show config")).status).toBe("completed");

    const nextRequest = JSON.stringify(t.requests[1]?.context);
    const session = JSON.stringify(t.session.entries());
    const events = JSON.stringify(t.eventsOf("tool_execution_end"));
    for (const secret of SECRETS) {
      expect(nextRequest).not.toContain(secret);
      expect(session).not.toContain(secret);
      expect(events).not.toContain(secret);
    }
    for (const marker of [
      "[redacted:openai-key]",
      "[redacted:github-token]",
      "[redacted:aws-access-key]",
      "[redacted:slack-token]",
      "[redacted:jwt]",
      "[redacted:private-key]",
      "[redacted:env:DB_PASSWORD]",
      "[redacted:customer-id]",
    ]) {
      expect(nextRequest).toContain(marker);
    }
    expect(nextRequest).toContain("nothing secret here: HOME=/home/me");
    const result = t.messages().find((m) => m.role === "toolResult");
    expect(result?.role === "toolResult" && result.details).toEqual({
      env: { DB_PASSWORD: "[redacted:env:DB_PASSWORD]" },
      lines: ["key [redacted:openai-key]"],
      count: 3,
    });
    expect(t.logs.map((log) => log.message)).toContainEqual(
      expect.stringMatching(/^masked 10 secret\(s\) in the result of leaky/),
    );
  });

  it("masks configured environment variable names, and leaves details alone when asked", async () => {
    t = await createTestHarness({
      plugins: [
        [
          createRedactPlugin({ env: { DEPLOY_HOST: "build-07.internal.example", DB_PASSWORD } }),
          { envNames: ["DEPLOY_HOST"], envByName: false, details: false },
        ],
      ],
      tools: [
        defineTool({
          name: "where",
          description: "where",
          parameters: Type.Object({}),
          execute: () => ({
            content: [{ type: "text", text: `host build-07.internal.example pw ${DB_PASSWORD}` }],
            details: { host: "build-07.internal.example" },
          }),
        }),
      ],
      script: [{ toolCalls: [{ name: "where", args: {} }] }, "done"],
    });
    await t.prompt("where");
    const text = JSON.stringify(t.requests[1]?.context.messages.at(-1));
    expect(text).toContain("host [redacted:env:DEPLOY_HOST]");
    expect(text).toContain(DB_PASSWORD); // envByName off: names alone no longer make a secret
    const result = t.messages().find((m) => m.role === "toolResult");
    expect(result?.role === "toolResult" && result.details).toEqual({ host: "build-07.internal.example" });
  });

  it("rejects an invalid configured pattern at load, naming the option", async () => {
    await expect(
      createTestHarness({
        plugins: [[createRedactPlugin({ env: {} }), { patterns: [{ name: "x", pattern: "(" }] }]],
      }),
    ).rejects.toMatchObject({ code: "invalid_options", plugin: "redact", path: "/patterns/0/pattern" });
  });
});

describe("redactor", () => {
  const redactor = createRedactor({ patterns: BUILTIN_PATTERNS, values: [] });

  it("masks an unterminated private key block to the end of the text (truncated output)", () => {
    expect(redactor.redact("x\n-----BEGIN OPENSSH PRIVATE KEY-----\nabc\ndef").text).toBe(
      "x\n[redacted:private-key]",
    );
  });

  it("leaves look-alikes that are too short alone", () => {
    expect(redactor.redact("sk-short ghp_tiny AKIA123 eyJx.eyJy.z").count).toBe(0);
  });

  it("masks the longest of overlapping values whole and names it", () => {
    const r = createRedactor({
      patterns: [],
      values: [
        { name: "env:A", value: "secret-value" },
        { name: "env:B", value: "secret-value-longer" },
      ],
    });
    expect(r.redact("secret-value-longer and secret-value").text).toBe(
      "[redacted:env:B] and [redacted:env:A]",
    );
  });

  it("screens text in one scan without missing what only a lone pattern or value matches", () => {
    // Backreferences and named groups cannot join the screening union; flags other than g neither.
    const r = createRedactor({
      patterns: [
        ...BUILTIN_PATTERNS,
        { name: "quoted", regex: /(["'])pin-\d{4}\1/g },
        { name: "named", regex: /(?<q>#)tok-\w+\k<q>/g },
        { name: "upper", regex: /acme-[a-z]{4}/gi },
      ],
      values: [{ name: "env:ODD", value: "pass\\1word" }],
    });
    expect(r.redact(`"pin-1234" #tok-abc# ACME-WXYZ pass\\1word`).text).toBe(
      "[redacted:quoted] [redacted:named] [redacted:upper] [redacted:env:ODD]",
    );
    const clean = "nothing to see: 'pin-1234\" #tok-abc";
    expect(r.redact(clean)).toEqual({ text: clean, count: 0 });
    expect(r.redact(`key ${OPENAI}`).text).toBe("key [redacted:openai-key]");
  });

  it("copies only what changed in details", () => {
    const untouched = { a: 1, b: ["x"] };
    expect(redactDeep(untouched, (s) => s)).toBe(untouched);
    const cyclic: Record<string, unknown> = { s: "secret" };
    cyclic.self = cyclic;
    const out = redactDeep(cyclic, (s) => s.replace("secret", "[redacted]")) as Record<string, unknown>;
    expect(out.s).toBe("[redacted]");
    expect(cyclic.s).toBe("secret");
  });
});
