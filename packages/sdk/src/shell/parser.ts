/**
 * The bash grammar, loaded once per process: web-tree-sitter (WASM) with
 * tree-sitter-bash's published `.wasm` build.
 *
 * Invariant: loading happens on first use and is shared; a failed load is retried
 * on the next call rather than cached, and never leaves a half-built parser behind.
 */
import { createRequire } from "node:module";
import { Language, Parser } from "web-tree-sitter";
import { keepWasmOnLiftoff } from "./wasm-tiering.js";

let loading: Promise<Parser> | undefined;

/** A command line touching most of the grammar: analysed once at load, so V8 compiles that code then, not on the first real call. */
export const WARM_UP = `A=1 a -b 'c' "d$e" $'f' \\g >h 2>&1 <<<i && j | k || (l; { m; }) & n $(o) \`p\` <(q)
f() { for r in s; do case $t in u) v;; esac; done; if w; then x; fi; }; echo \${y:-z} $((1+2)) [[ -f a ]]`;

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
  // Before the runtime's and the grammar's WebAssembly is compiled (wasm-tiering.ts).
  keepWasmOnLiftoff();
  await Parser.init();
  const require = createRequire(import.meta.url);
  const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}
