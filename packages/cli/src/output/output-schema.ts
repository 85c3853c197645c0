/**
 * `rein run --output-schema schema.json`: the final answer must be one JSON value
 * matching a JSON Schema. Invariants: a schema that cannot be read, parsed or
 * compiled is a usage error naming the file before anything runs (exit 2); an
 * answer is accepted only if it parses as JSON (a single Markdown code fence
 * around it is tolerated) and the schema validates it; the model is told the
 * schema up front and, after a failure, exactly what was wrong.
 *
 * Validation is Ajv's (the reference JSON Schema validator): it checks the schema
 * itself against its draft's meta-schema in strict mode, so a typo such as
 * `"type": "strin"` or an unknown keyword is reported instead of silently
 * accepting every answer; `$schema` picks the draft (2020-12 when absent,
 * 2019-09 and draft-07 when named); `ajv-formats` gives the standard `format`s.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import type { AgentMessage, RunOutcome } from "@rein/harness";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import { usageError } from "../errors.js";

export type Checked = { ok: true; value: unknown } | { ok: false; errors: string[] };

export interface OutputSchema {
  /** The schema file, absolute. */
  file: string;
  /** What the model is told (appended to the system prompt). */
  instructions: string;
  check(answer: string): Checked;
}

/** Ajv (~100 modules) loads only for a run with `--output-schema`, not with every `rein run`. */
function validatorFor(schema: Record<string, unknown>): Ajv {
  const require = createRequire(import.meta.url);
  const { Ajv } = require("ajv") as typeof import("ajv");
  const { Ajv2019 } = require("ajv/dist/2019.js") as typeof import("ajv/dist/2019.js");
  const { Ajv2020 } = require("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
  const addFormats = require("ajv-formats") as typeof import("ajv-formats");
  const draft = typeof schema.$schema === "string" ? schema.$schema : "";
  const options = { allErrors: true, strict: true } as const;
  const ajv =
    draft.includes("draft-07") || draft.includes("draft-06")
      ? new Ajv(options)
      : draft.includes("2019-09")
        ? new Ajv2019(options)
        : new Ajv2020(options);
  const add = ((addFormats as { default?: unknown }).default ?? addFormats) as (ajv: Ajv) => void;
  add(ajv);
  return ajv;
}

const where = (error: ErrorObject) => error.instancePath || "(the whole value)";

/** Reads and compiles the schema; every problem is a usage error naming the file. */
export function loadOutputSchema(file: string, cwd: string): OutputSchema {
  const path = resolve(cwd, file);
  let schema: unknown;
  try {
    schema = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw usageError(`--output-schema ${file}: ${(error as Error).message}`, "expected a JSON Schema file");
  }
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    throw usageError(`--output-schema ${file}: expected a JSON Schema object`);
  let validate: ValidateFunction;
  try {
    validate = validatorFor(schema as Record<string, unknown>).compile(schema);
  } catch (error) {
    throw usageError(`--output-schema ${file}: not a valid JSON Schema: ${(error as Error).message}`);
  }
  const text = JSON.stringify(schema, null, 2);
  return {
    file: path,
    instructions: [
      "Your final answer must be exactly one JSON value that matches this JSON Schema,",
      "with no other text and no code fence around it:",
      text,
    ].join("\n"),
    check(answer) {
      const parsed = parseAnswer(answer);
      if (!parsed.ok) return parsed;
      if (validate(parsed.value)) return parsed;
      return {
        ok: false,
        errors: (validate.errors ?? []).map((error) => `${where(error)}: ${error.message ?? error.keyword}`),
      };
    },
  };
}

function parseAnswer(answer: string): Checked {
  const trimmed = answer.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  const text = fenced ? (fenced[1] as string) : trimmed;
  if (text === "") return { ok: false, errors: ["the answer is empty: expected a JSON value"] };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, errors: [`the answer is not JSON: ${(error as Error).message}`] };
  }
}

/** The text of a run's final assistant message. */
export function finalAnswer(messages: readonly AgentMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as AgentMessage;
    if (message.role !== "assistant") continue;
    return message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  }
  return "";
}

/** The repair turn's message: what was wrong, and to answer again with only the JSON. */
export function repairPrompt(errors: readonly string[]): string {
  return [
    "Your final answer does not match the required JSON Schema:",
    ...errors.map((error) => `- ${error}`),
    "Reply again with only the corrected JSON value.",
  ].join("\n");
}

/**
 * Runs `prompt`, checks the final answer, and on a mismatch runs exactly one
 * repair turn; `output` is undefined when a run did not complete (no answer to check).
 */
export async function checkedRun(
  schema: OutputSchema,
  prompt: (text: string) => Promise<RunOutcome>,
  text: string,
  onRepair: (errors: readonly string[]) => void,
): Promise<{ outcome: RunOutcome; output: Checked | undefined }> {
  let outcome = await prompt(text);
  if (outcome.status !== "completed") return { outcome, output: undefined };
  const first = schema.check(finalAnswer(outcome.messages));
  if (first.ok) return { outcome, output: first };
  onRepair(first.errors);
  outcome = await prompt(repairPrompt(first.errors));
  return {
    outcome,
    output: outcome.status === "completed" ? schema.check(finalAnswer(outcome.messages)) : undefined,
  };
}
