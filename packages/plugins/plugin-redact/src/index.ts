/**
 * @rein/plugin-redact: masks secrets in tool results before the model or the
 * session sees them - API-key shapes, JWTs, private-key blocks, your own
 * patterns, and the values of environment variables whose names look secret.
 *
 * Works in `toolResult` (the last stage), on text content and on every string in
 * `details`. Invariant: the persisted tool result and every later request are
 * built from the redacted result, so neither ever holds the masked text.
 */
import { definePlugin, SdkError, Stage, type Static, type TextContent, Type } from "@rein/sdk";
import {
  BUILTIN_PATTERNS,
  createRedactor,
  redactDeep,
  type SecretPattern,
  secretEnvValues,
} from "./redactor.js";

export {
  BUILTIN_PATTERNS,
  createRedactor,
  type Redactor,
  type RedactorConfig,
  redactDeep,
  SECRET_ENV_NAME,
  type SecretPattern,
  secretEnvValues,
} from "./redactor.js";

export const RedactOptions = Type.Object(
  {
    /** Mask the built-in shapes (openai-key, anthropic-key, github-token, aws-access-key, slack-token, jwt, private-key). */
    builtins: Type.Boolean({ default: true }),
    /** Extra patterns: a regular expression source (`flags` default none; `g` is added) and a name for the marker. */
    patterns: Type.Array(
      Type.Object(
        {
          name: Type.String({ pattern: "^[A-Za-z0-9_.:-]+$" }),
          pattern: Type.String({ minLength: 1 }),
          flags: Type.Optional(Type.String({ pattern: "^[imsu]*$" })),
        },
        { additionalProperties: false },
      ),
      { default: [] },
    ),
    /** Mask values of environment variables whose names contain KEY, TOKEN, SECRET, PASSWORD (also PASSWD, CREDENTIAL). */
    envByName: Type.Boolean({ default: true }),
    /** More environment variables whose values are masked, whatever their names. */
    envNames: Type.Array(Type.String(), { default: [] }),
    /** Only values longer than this are masked (short values such as "1" or "true" would mask everything). */
    minEnvValueLength: Type.Integer({ minimum: 0, default: 8 }),
    /** Also mask strings inside the result's `details` (what UIs and the session keep). */
    details: Type.Boolean({ default: true }),
  },
  { additionalProperties: false },
);
export type RedactOptions = Static<typeof RedactOptions>;

export interface RedactPluginOptions {
  /** The environment to read secret values from; default `process.env` (read at setup). */
  env?: Readonly<Record<string, string | undefined>>;
}

export function createRedactPlugin(plugin: RedactPluginOptions = {}) {
  return definePlugin({
    name: "redact",
    version: "0.1.0",
    description: "Masks secrets in tool results before the model or the session sees them.",
    options: RedactOptions,
    setup(rein, options) {
      const patterns: SecretPattern[] = options.builtins ? [...BUILTIN_PATTERNS] : [];
      options.patterns.forEach((p, index) => {
        try {
          patterns.push({ name: p.name, regex: new RegExp(p.pattern, `${p.flags ?? ""}g`) });
        } catch (error) {
          throw new SdkError(
            "invalid_options",
            `plugin "${rein.plugin.name}": option /patterns/${index}/pattern is not a valid regular expression: ${(error as Error).message}`,
            { plugin: rein.plugin.name, path: `/patterns/${index}/pattern` },
          );
        }
      });
      const values = secretEnvValues(plugin.env ?? process.env, {
        names: options.envNames,
        minLength: options.minEnvValueLength,
        byName: options.envByName,
      });
      const redactor = createRedactor({ patterns, values });
      rein.logger.debug(`${patterns.length} pattern(s), ${values.length} environment value(s)`);

      rein.hooks.toolResult.tap({ name: "redact", stage: Stage.last }, (result, context) => {
        let count = 0;
        const redact = (text: string) => {
          const out = redactor.redact(text);
          count += out.count;
          return out.text;
        };
        const content = result.content.map((part) =>
          part.type === "text" ? ({ ...part, text: redact(part.text) } satisfies TextContent) : part,
        );
        const details = options.details ? redactDeep(result.details, redact) : result.details;
        if (count === 0) return result;
        rein.logger.info(
          `masked ${count} secret(s) in the result of ${context.call.name} (${context.call.id})`,
        );
        return { ...result, content, details };
      });
    },
  });
}

export default createRedactPlugin();
