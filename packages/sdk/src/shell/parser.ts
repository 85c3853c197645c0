/**
 * The bash grammar, loaded once per process: web-tree-sitter (WASM) with
 * tree-sitter-bash's published `.wasm` build.
 *
 * Invariant: loading happens on first use and is shared; a failed load is retried
 * on the next call rather than cached, and never leaves a half-built parser behind.
 */
import { createRequire } from "node:module";
import { Language, Parser } from "web-tree-sitter";

let loading: Promise<Parser> | undefined;

/** The shared bash parser; loads the grammar on first call. */
export function loadBashParser(): Promise<Parser> {
  if (!loading) {
    loading = build().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
  }
  return loading;
}

async function build(): Promise<Parser> {
  await Parser.init();
  const require = createRequire(import.meta.url);
  const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}
