/**
 * jiti's `transform` for config files and plugins: sucrase on the fast path,
 * jiti's own Babel transform for what sucrase cannot compile faithfully.
 *
 * Invariants: the output keeps every line of the source on its line (sucrase
 * never moves code across lines, and what this module adds goes on line 1), so
 * stack traces and syntax errors name the user's line; the output has the shape
 * jiti's Babel output has (a CommonJS body for jiti's module wrapper: static
 * imports are `await jitiImport(...)` in async mode, `import()` is `jitiImport()`,
 * `import.meta` is the file's own URL, path and resolver); a file that uses
 * decorators or a TypeScript namespace with values (which sucrase would drop or
 * pass through) goes to Babel, as does anything sucrase fails to parse, so every
 * file that loaded before still loads; output that does not compile (sucrase
 * passes some syntax errors through) goes to Babel too, so a syntax error
 * names the file and line as before.
 *
 * sucrase's `transform()` cannot emit `await jitiImport` nor say where a dynamic
 * import ended up, so this drives its internal pipeline (parse, import
 * bookkeeping, token transformers) directly: the version is pinned, and the
 * tests pin what is relied on.
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { createJiti, type Jiti, type TransformOptions, type TransformResult } from "jiti";

/** Names the transform in the cache folder: a change of output must not meet files cached by an older one. */
export const TRANSPILER_ID = "sucrase-3.35.1-r1";

interface Token {
  type: number;
  contextualKeyword: number;
  start: number;
  end: number;
  isType: boolean;
}

interface SucraseOptions {
  transforms: string[];
  filePath: string;
  preserveDynamicImport: boolean;
  disableESTransforms: boolean;
  enableLegacyTypeScriptModuleInterop: boolean;
}

interface ImportProcessor {
  importsToReplace: Map<string, string>;
  preprocessTokens(): void;
  pruneTypeOnlyImports(): void;
  getGlobalNames(): Set<string>;
}

interface NameManager {
  claimFreeName(name: string): string;
}

/** The parts of sucrase's pipeline used here (sucrase/dist, CommonJS). */
interface Sucrase {
  parse(code: string, jsx: boolean, typescript: boolean, flow: boolean): { tokens: Token[]; scopes: unknown };
  NameManager: new (code: string, tokens: Token[]) => NameManager;
  HelperManager: new (names: NameManager) => unknown;
  TokenProcessor: new (
    code: string,
    tokens: Token[],
    flow: boolean,
    disableESTransforms: boolean,
    helpers: unknown,
  ) => unknown;
  CJSImportProcessor: new (
    names: NameManager,
    tokens: unknown,
    legacyTypeScriptInterop: boolean,
    options: SucraseOptions,
    typescript: boolean,
    keepUnusedImports: boolean,
    helpers: unknown,
  ) => ImportProcessor;
  identifyShadowedGlobals(tokens: unknown, scopes: unknown, names: Set<string>): void;
  RootTransformer: new (
    context: unknown,
    transforms: string[],
    legacyBabel5Interop: boolean,
    options: SucraseOptions,
  ) => { transform(): { code: string; mappings: (number | undefined)[] } };
  tt: Record<"_import" | "_declare" | "parenL" | "dot" | "at" | "name", number>;
  keyword: Record<"_namespace" | "_module", number>;
}

let loaded: Sucrase | undefined;

/** Loads sucrase on the first transform, so warm starts and `rein --version` never pay for it. */
function sucrase(): Sucrase {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const from = <T>(path: string, name = "default"): T =>
    (require(`sucrase/dist/${path}`) as Record<string, T>)[name] as T;
  loaded = {
    parse: from("parser", "parse"),
    NameManager: from("NameManager"),
    HelperManager: from("HelperManager", "HelperManager"),
    TokenProcessor: from("TokenProcessor"),
    CJSImportProcessor: from("CJSImportProcessor"),
    identifyShadowedGlobals: from("identifyShadowedGlobals"),
    RootTransformer: from("transformers/RootTransformer"),
    tt: from("parser/tokenizer/types", "TokenType"),
    keyword: from("parser/tokenizer/keywords", "ContextualKeyword"),
  };
  return loaded;
}

/** Why a file needs Babel, or undefined when sucrase compiles it faithfully. */
function babelOnly(s: Sucrase, tokens: Token[]): string | undefined {
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.type === s.tt._declare) {
      // `declare namespace` / `declare global { namespace ... }` hold types only: sucrase rightly drops them.
      while (tokens[i + 1]?.isType) i++;
      continue;
    }
    if (token.type === s.tt.at) return "decorators";
    const namespace =
      token.type === s.tt.name &&
      token.isType &&
      (token.contextualKeyword === s.keyword._namespace || token.contextualKeyword === s.keyword._module) &&
      tokens[i + 1]?.type === s.tt.name;
    if (namespace) return "namespace";
  }
  return undefined;
}

const DYNAMIC_IMPORT = /^import(?=\s*\()/;
const IMPORT_META = /^import\s*\.\s*meta\b/;

/** sucrase's output for one file, or the reason it must go to Babel. */
export function sucraseTransform(
  source: string,
  options: { filename: string; ts: boolean; async: boolean },
): { code: string } | { babel: string } {
  const s = sucrase();
  const transforms = options.ts ? ["typescript", "imports"] : ["imports"];
  const sucraseOptions: SucraseOptions = {
    transforms,
    filePath: options.filename,
    preserveDynamicImport: true,
    // Node >= 20 runs class fields, `?.`, `??` natively, as jiti's Babel output leaves them.
    disableESTransforms: true,
    // No interop helpers, as jiti's Babel output: `jitiImport` already gives an ESM namespace (or an
    // `__esModule` object for a transpiled file), so a default import is `.default` and `* as` the module.
    enableLegacyTypeScriptModuleInterop: true,
  };
  const { tokens, scopes } = s.parse(source, false, options.ts, false);
  const reason = babelOnly(s, tokens);
  if (reason) return { babel: reason };

  const nameManager = new s.NameManager(source, tokens);
  const helperManager = new s.HelperManager(nameManager);
  const tokenProcessor = new s.TokenProcessor(source, tokens, false, true, helperManager);
  const importProcessor = new s.CJSImportProcessor(
    nameManager,
    tokenProcessor,
    sucraseOptions.enableLegacyTypeScriptModuleInterop,
    sucraseOptions,
    options.ts,
    false,
    helperManager,
  );
  importProcessor.preprocessTokens();
  s.identifyShadowedGlobals(tokenProcessor, scopes, importProcessor.getGlobalNames());
  if (options.ts) importProcessor.pruneTypeOnlyImports();
  if (options.async) {
    // Static imports load through jiti's async import, as jiti's Babel plugin does (ESM dependencies stay native).
    for (const [path, code] of importProcessor.importsToReplace) {
      importProcessor.importsToReplace.set(
        path,
        code.replace(`require('${path}')`, () => `(await jitiImport('${path}'))`),
      );
    }
  }

  const dynamicImports: number[] = [];
  const metas: number[] = [];
  const text = (token: Token | undefined) => (token ? source.slice(token.start, token.end) : "");
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.isType) continue;
    // sucrase reads `import(` as the import keyword, `import.meta` as a name, a dot and a name.
    if (token.type === s.tt._import && tokens[i + 1]?.type === s.tt.parenL) dynamicImports.push(i);
    else if (
      token.type === s.tt.name &&
      tokens[i + 1]?.type === s.tt.dot &&
      text(token) === "import" &&
      text(tokens[i + 2]) === "meta"
    ) {
      metas.push(i);
    }
  }
  const metaName = metas.length > 0 ? nameManager.claimFreeName("_importMeta") : "";

  const context = { tokenProcessor, scopes, nameManager, importProcessor, helperManager };
  const { code, mappings } = new s.RootTransformer(context, transforms, false, sucraseOptions).transform();

  // Rewrite from the end so earlier offsets stay valid.
  const edits: { at: number; pattern: RegExp; text: string }[] = [
    ...dynamicImports.map((i) => ({ at: mappings[i] ?? -1, pattern: DYNAMIC_IMPORT, text: "jitiImport" })),
    ...metas.map((i) => ({ at: mappings[i] ?? -1, pattern: IMPORT_META, text: metaName })),
  ].sort((a, b) => b.at - a.at);
  let out = code;
  for (const edit of edits) {
    const match = edit.pattern.exec(out.slice(edit.at, edit.at + 64));
    if (edit.at < 0 || !match) return { babel: "an import expression sucrase moved" };
    out = out.slice(0, edit.at) + edit.text + out.slice(edit.at + match[0].length);
  }
  if (metaName) {
    const meta = `var ${metaName} = { url: ${JSON.stringify(pathToFileURL(options.filename).href)}, filename: ${JSON.stringify(options.filename)}, dirname: ${JSON.stringify(dirname(options.filename))}, resolve: (specifier) => jitiESMResolve(specifier), env: process.env };`;
    const strict = '"use strict";';
    const at = out.indexOf(strict);
    if (at < 0) return { babel: "no module prologue" };
    out = out.slice(0, at + strict.length) + meta + out.slice(at + strict.length);
  }
  return { code: out };
}

let babel: Jiti | undefined;

/** jiti's default transform (Babel, loaded on first use), through a jiti instance that caches nothing itself. */
function babelTransform(options: TransformOptions): TransformResult {
  babel ??= createJiti(import.meta.url, { fsCache: false, moduleCache: false });
  return { code: babel.transform(options) };
}

/**
 * Whether the output compiles in jiti's module wrapper. sucrase assumes valid
 * input and passes some syntax errors through; V8 would then report them
 * without a file or line, so those files go to Babel, which names both.
 */
function compiles(code: string, filename: string, async: boolean): boolean {
  const body = code.startsWith("#!") ? `// ${code}` : code;
  try {
    new Script(
      `(${async ? "async " : ""}function (exports, require, module, __filename, __dirname, jitiImport, jitiESMResolve) { ${body}\n});`,
      {
        filename,
      },
    );
    return true;
  } catch {
    return false;
  }
}

/** The `transform` option given to jiti. */
export function transform(options: TransformOptions): TransformResult {
  const { filename, source } = options;
  const plain = filename !== undefined && !options.jsx && !/x$/.test(filename);
  if (plain) {
    try {
      const result = sucraseTransform(source, {
        filename,
        ts: options.ts === true,
        async: options.async === true,
      });
      if ("code" in result && compiles(result.code, filename, options.async === true)) return result;
    } catch {
      // sucrase could not parse it: Babel either can (syntax sucrase lacks) or reports the syntax error as jiti always has.
    }
  }
  return babelTransform(options);
}
