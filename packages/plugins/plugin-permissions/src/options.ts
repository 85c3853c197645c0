/**
 * The permissions plugin's options: one schema, the source of truth for what a
 * config may set (validated by the SDK before setup, defaults filled in).
 */
import { type Static, Type } from "@rein/sdk";
import { DEFAULT_INSTRUCTION_FILES } from "./instruction-files.js";
import type { PermissionMode } from "./modes.js";

const Verdict = (fallback: "allow" | "ask" | "deny") =>
  Type.Union([Type.Literal("allow"), Type.Literal("ask"), Type.Literal("deny")], { default: fallback });

export const PermissionsOptions = Type.Object(
  {
    /** The verdict for calls no gate has an opinion on, by the tool's risk (`unknown`: tools that declare none). */
    defaults: Type.Object(
      {
        read: Verdict("allow"),
        write: Verdict("ask"),
        exec: Verdict("ask"),
        network: Verdict("ask"),
        unknown: Verdict("ask"),
      },
      { default: {}, additionalProperties: false },
    ),
    /** Whether to install `defaults` as the harness's default verdict. */
    setDefaultVerdict: Type.Boolean({ default: true }),
    /** `auto`: prompt when input and output are terminals; `never`: always answer without a prompt (deny). */
    prompt: Type.Union([Type.Literal("auto"), Type.Literal("never")], { default: "auto" }),
    /**
     * What "allow for this session" covers, always for the same tool and decider:
     * `call` - exactly what the prompt shows (the same simple commands of a shell
     * call, the same canonical paths of a file tool, else the same arguments);
     * `exact` - the same arguments only.
     */
    grantScope: Type.Union([Type.Literal("call"), Type.Literal("exact")], { default: "call" }),
    /** How much runs without asking: `default`, `acceptEdits`, `plan` (read-only), `sandboxed` (see modes.ts). */
    mode: Type.Union(
      [Type.Literal("default"), Type.Literal("acceptEdits"), Type.Literal("plan"), Type.Literal("sandboxed")],
      { default: "default" satisfies PermissionMode },
    ),
    /**
     * Where "always allow in this project" grants are written: a JSON config layer
     * (the CLI sets its local layer, `.rein/local.json`). Unset: the prompt offers no "always".
     */
    grantsFile: Type.Optional(Type.String({ minLength: 1 })),
    /** Project grants written by this plugin to `grantsFile` (signed; others are ignored with a warning). */
    projectGrants: Type.Array(Type.Unknown(), { default: [] }),
    /**
     * A write to an instruction file (`instructionFiles`): `ask` (default) whatever an
     * allow rule or a mode says, `deny`, or `allow` (no opinion: the other gates decide).
     */
    instructionWrites: Verdict("ask"),
    /** What later sessions read as instructions: file names (any depth) and folders (`dir/`); see instruction-files.ts. */
    instructionFiles: Type.Array(Type.String({ minLength: 1 }), { default: [...DEFAULT_INSTRUCTION_FILES] }),
  },
  { additionalProperties: false },
);
export type PermissionsOptions = Static<typeof PermissionsOptions>;
