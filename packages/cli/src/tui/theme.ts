/**
 * How the terminal UI looks: pi-tui themes for the Markdown and the editor, and
 * code highlighting through emphasize (highlight.js grammars, ANSI output).
 * Colours follow the CLI's rules (ui/terminal.ts): none with NO_COLOR.
 */
import { createRequire } from "node:module";
import type { EditorTheme, MarkdownTheme } from "@earendil-works/pi-tui";
import type { Colors } from "../ui/terminal.js";

/** The part of emphasize used here. */
interface Emphasize {
  registered(lang: string): boolean;
  highlight(lang: string, code: string): { value: string };
  highlightAuto(code: string): { value: string };
}

let emphasize: Emphasize | undefined;

/**
 * emphasize, required on the first code block (synchronously: rendering is; Node
 * requires ES modules since 22.12). Not imported by type: highlight.js's types pull
 * in the DOM library, which would change `Headers` and friends for everything compiled
 * with this package.
 */
function load(): Emphasize {
  const module = createRequire(import.meta.url)("emphasize") as {
    createEmphasize(grammars: unknown): Emphasize;
    common: unknown;
  };
  return module.createEmphasize(module.common);
}

/** `code` highlighted for `lang` (auto-detected when unknown), one string per line. */
export function highlight(code: string, lang: string | undefined, colors: Colors): string[] {
  if (!colors.isColorSupported) return code.split("\n");
  emphasize ??= load();
  try {
    const known = lang !== undefined && emphasize.registered(lang);
    const result = known ? emphasize.highlight(lang, code) : emphasize.highlightAuto(code);
    return result.value.split("\n");
  } catch {
    return code.split("\n");
  }
}

export function markdownTheme(c: Colors): MarkdownTheme {
  return {
    heading: (text) => c.bold(c.cyan(text)),
    link: (text) => c.underline(c.blue(text)),
    linkUrl: (text) => c.dim(text),
    code: (text) => c.yellow(text),
    codeBlock: (text) => text,
    codeBlockBorder: (text) => c.dim(text),
    quote: (text) => c.italic(text),
    quoteBorder: (text) => c.dim(text),
    hr: (text) => c.dim(text),
    listBullet: (text) => c.cyan(text),
    bold: (text) => c.bold(text),
    italic: (text) => c.italic(text),
    strikethrough: (text) => c.strikethrough(text),
    underline: (text) => c.underline(text),
    highlightCode: (code, lang) => highlight(code, lang, c),
  };
}

export function editorTheme(c: Colors): EditorTheme {
  return {
    borderColor: (text) => c.dim(text),
    selectList: {
      selectedPrefix: (text) => c.cyan(text),
      selectedText: (text) => c.bold(text),
      description: (text) => c.dim(text),
      scrollInfo: (text) => c.dim(text),
      noMatch: (text) => c.dim(text),
    },
  };
}
