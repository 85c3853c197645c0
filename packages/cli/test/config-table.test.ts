/**
 * The config table is the one place a key is declared: the SDK's `ReinConfig`
 * has exactly its keys, the validator checks each key by its schema (naming the
 * key), the layers merge by its rules, and the CLI's config flags are the ones
 * its wiring names.
 */
import { readFileSync } from "node:fs";
import { CONFIG_KEYS, CONFIG_TABLE, type ConfigKeyName, type ReinConfig } from "@rein/sdk";
import { Command } from "commander";
import { describe, expect, expectTypeOf, it } from "vitest";
import { CONFIG_WIRING } from "../src/agent/config-wiring.js";
import { addConfigFlags } from "../src/config/cli-flags.js";
import { mergeValues, originOf } from "../src/config/merge-config.js";
import { CONFIG_OPTIONS, validateConfig } from "../src/config/validate-config.js";

/** Whether a key's schema checks anything (`Type.Unknown()` is `{}`). */
const checks = (key: ConfigKeyName) => Object.keys(CONFIG_TABLE[key].schema).length > 0;

const SOURCE = { file: "/project/rein.config.json", text: undefined, layer: "project" };

function failure(raw: unknown): { code?: string; message: string; file?: string } {
  try {
    validateConfig(raw, SOURCE);
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
}

describe("the config table", () => {
  it("ReinConfig's keys are the table's keys", () => {
    expectTypeOf<keyof ReinConfig>().toEqualTypeOf<ConfigKeyName>();
    expect(CONFIG_OPTIONS).toEqual(CONFIG_KEYS);
    expect(Object.keys(CONFIG_TABLE)).toEqual(CONFIG_KEYS);
  });

  it.each(CONFIG_KEYS.filter(checks))(
    "%s: a value of the wrong type is a config error naming the key and the file",
    (key) => {
      // No key of the table takes a bare number.
      const error = failure({ [key]: 12345 });
      expect(error).toMatchObject({ code: "config", file: SOURCE.file });
      expect(error.message).toMatch(new RegExp(`^${SOURCE.file}: ${key}: expected .+, got number 12345$`));
    },
  );

  it("only mcpServe is left to its command to check (rein mcp serve)", () => {
    const unchecked = CONFIG_KEYS.filter((key) => !checks(key));
    expect(unchecked).toEqual(["mcpServe"]);
  });

  it("an unknown key in a closed object names the key path and what keys there are", () => {
    expect(failure({ retry: { maxAttempt: 3 } }).message).toBe(
      '/project/rein.config.json: retry.maxAttempt: expected one of enabled, maxAttempts, baseDelayMs, maxDelayMs, got string "maxAttempt"',
    );
    expect(failure({ models: [{ id: "m", baseUrl: "ftp://x" }] }).message).toBe(
      '/project/rein.config.json: models[0].baseUrl: expected an http(s) URL, got string "ftp://x"',
    );
    const url = failure({ session: { url: "postgres://u:secret@h/db" } }).message;
    expect(url).toContain('session.url: expected nothing unless session.store is "postgres"');
    expect(url).not.toContain("secret");
  });

  it("an unknown top-level key gets the closest table key", () => {
    expect(failure({ retyr: {} }).message).toContain('unknown option "retyr" (did you mean "retry"?)');
  });

  it("layers merge by the table's rules: replace keys whole, deep keys per field", () => {
    const merge = (lower: ReinConfig, higher: ReinConfig) =>
      mergeValues(lower, originOf(lower, "user"), higher, originOf(higher, "project"))[0];
    expect(merge({ model: { script: ["a", "b"] } }, { model: { script: ["c"] } })).toEqual({
      model: { script: ["c"] },
    });
    expect(merge({ retry: { maxAttempts: 2 } }, { retry: { baseDelayMs: 5 } })).toEqual({
      retry: { maxAttempts: 2, baseDelayMs: 5 },
    });
    expect(merge({ tools: { active: ["a", "b"] } }, { tools: { active: ["c"] } })).toEqual({
      tools: { active: ["c"] },
    });
  });

  it("the config flags are the ones the wiring names, each writing a table key", () => {
    const registered = addConfigFlags(new Command("x")).options.map((option) => option.long);
    const wired = CONFIG_KEYS.flatMap((key) => CONFIG_WIRING[key].flags ?? []);
    expect([...registered].sort()).toEqual([...wired].sort());
  });
});

describe("the README's reload paragraph", () => {
  it("names exactly the keys that need a restart", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const paragraph = /need a restart \(the reload names each changed one and says why\):\n([^.]+)\./.exec(
      readme,
    );
    expect(paragraph).not.toBeNull();
    const listed = [...(paragraph?.[1] ?? "").matchAll(/`(\w+)`/g)].map((m) => m[1]);
    const restart = CONFIG_KEYS.filter((key) => "restart" in CONFIG_WIRING[key].reload);
    expect(listed).toEqual(restart);
  });
});
