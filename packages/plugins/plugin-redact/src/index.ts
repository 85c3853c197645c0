/**
 * @rein/plugin-redact: masks secrets in tool results before the model or the
 * session sees them - API-key shapes, JWTs, private-key blocks, your own
 * patterns, and the values of environment variables whose names look secret.
 *
 * Works in `toolResult` (the last stage), on text content and on every string in
 * `details`, error results included. Invariant: the persisted tool result and
 * every later request are built from the redacted result, so neither ever holds
 * the masked text. The same mask is published through the SDK's `textMasks`, so
 * text is masked *before* anyone cuts it (grep's long-line cut) and in reasons
 * other plugins give (policy, permissions): a secret never leaves in pieces.
 * With `assistantText`, the assistant's own text is masked in every request too.
 */
import {
  type AgentMessage,
  definePlugin,
  type RequestPayload,
  SdkError,
  Stage,
  type Static,
  type TextContent,
  type ToolResultPayload,
  Type,
  textMasks,
} from "@rein/sdk";
import {
  BUILTIN_PATTERNS,
  createRedactor,
  type Redactor,
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
    /** Also mask the assistant's own text (and its tool-call arguments) in every request sent to the model. */
    assistantText: Type.Boolean({ default: false }),
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

      const masker = resultMasker(redactor, options.details);
      // Published first: tools (grep) and other plugins mask with it before cutting or quoting.
      rein.onDispose(textMasks(rein).add(rein.plugin.name, (text) => redactor.redact(text).text));
      rein.hooks.toolResult.tap({ name: "redact", stage: Stage.last }, (result, context) => {
        const { payload, count } = masker(result);
        if (count === 0) return result;
        rein.logger.info(
          `masked ${count} secret(s) in the result of ${context.call.name} (${context.call.id})`,
        );
        return payload;
      });
      // Streaming updates (tool_execution_update) have the same shape: masked the same way,
      // before any observer sees them (security invariant 7).
      rein.hooks.toolUpdate.tap({ name: "redact", stage: Stage.last }, (update) => masker(update).payload);
      if (options.assistantText) {
        rein.hooks.beforeRequest.tap({ name: "redact", stage: Stage.last }, (request) =>
          maskAssistantText(request, (text) => redactor.redact(text).text),
        );
      }
    },
  });
}

/**
 * The masking of one tool result (or streaming update: same shape): text parts, and
 * strings in `details` when `details` is set. Returns the payload and how many
 * secrets were masked (0: the payload is returned unchanged).
 */
export function resultMasker(redactor: Redactor, details: boolean) {
  return <T extends Pick<ToolResultPayload, "content" | "details">>(
    result: T,
  ): { payload: T; count: number } => {
    let count = 0;
    const redact = (text: string) => {
      const out = redactor.redact(text);
      count += out.count;
      return out.text;
    };
    const content = result.content.map((part) =>
      part.type === "text" ? ({ ...part, text: redact(part.text) } satisfies TextContent) : part,
    );
    const maskedDetails = details ? redactDeep(result.details, redact) : result.details;
    if (count === 0) return { payload: result, count };
    return { payload: { ...result, content, details: maskedDetails }, count };
  };
}

/** The request with the assistant's text parts (and tool-call arguments) masked. */
export function maskAssistantText(request: RequestPayload, mask: (text: string) => string): RequestPayload {
  let changed = false;
  const messages = request.messages.map((message): AgentMessage => {
    if (message.role !== "assistant") return message;
    const content = message.content.map((part) => {
      if (part.type === "text") {
        const text = mask(part.text);
        if (text === part.text) return part;
        changed = true;
        return { ...part, text };
      }
      if (part.type === "toolCall") {
        const args = redactDeep(part.arguments, mask) as typeof part.arguments;
        if (JSON.stringify(args) === JSON.stringify(part.arguments)) return part;
        changed = true;
        return { ...part, arguments: args };
      }
      return part;
    });
    return { ...message, content } as AgentMessage;
  });
  return changed ? { ...request, messages } : request;
}

export default createRedactPlugin();
