/**
 * Plugins and configs are transpiled by sucrase through jiti's `transform`
 * option, and by jiti's Babel only where sucrase would be wrong. Pinned here:
 * TypeScript-only features run (enums, parameter properties, decorators,
 * namespaces with values); an error names the line of the plugin's own file;
 * imports keep ESM semantics across ESM, CommonJS and TypeScript modules; a
 * second load reads the on-disk cache instead of transpiling again.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lineInFile } from "../src/config/entry-location.js";
import { cacheDir, lineFromError, moduleLoader } from "../src/config/module-loader.js";
import { sucraseTransform, TRANSPILER_ID } from "../src/config/transpile.js";

let dir: string;
let previousCache: string | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rein-transform-"));
  previousCache = process.env.REIN_CACHE_DIR;
  process.env.REIN_CACHE_DIR = join(dir, ".cache");
});

afterAll(() => {
  if (previousCache === undefined) delete process.env.REIN_CACHE_DIR;
  else process.env.REIN_CACHE_DIR = previousCache;
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const file = join(dir, name);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** Imports `file` through a fresh loader (no module cache: every call evaluates again). */
const load = (file: string) => moduleLoader({ fresh: true }).import(file);

/** Which path a file takes: "sucrase", or the reason it goes to Babel. */
function path(source: string): string {
  const result = sucraseTransform(source, { filename: join(dir, "x.ts"), ts: true, async: true });
  return "code" in result ? "sucrase" : result.babel;
}

describe("TypeScript features a type stripper cannot do", () => {
  it("enums, const enums and parameter properties run through sucrase", async () => {
    const source = `export enum Color { Red, Green = "g", Blue = 4 }
const enum Size { S = 1, M = S * 2 }
export class Point {
  constructor(public readonly x: number, private y = 2, protected z?: number) {}
  sum(): number { return this.x + this.y; }
}
abstract class Base { abstract name(): string; declare tag: string; }
export class Named extends Base { override name() { return "named" satisfies string; } }
export const size = Size.M;
`;
    expect(path(source)).toBe("sucrase");
    const ns = await load(write("features.ts", source));
    expect(ns.Color).toMatchObject({ Red: 0, Green: "g", Blue: 4, 0: "Red" });
    const Point = ns.Point as new (x: number) => { x: number; sum(): number };
    expect(new Point(3).sum()).toBe(5);
    expect(new (ns.Named as new () => { name(): string })().name()).toBe("named");
    expect(ns.size).toBe(2);
  });

  it.each([
    ["a class decorator", "@sealed class A {}", "decorators"],
    ["a method decorator", "class A { @log m() {} }", "decorators"],
    ["a namespace with values", "namespace Space { export const a = 1; }", "namespace"],
    ["an exported namespace", "export namespace Space { export const a = 1; }", "namespace"],
    ["a module keyword namespace", "module Space { export const a = 1; }", "namespace"],
    ["a declared namespace (types only)", "declare namespace Space { const a: number; }", "sucrase"],
    ["a global augmentation", "declare global { interface Window { x: number } }", "sucrase"],
    [
      "a namespace in a global augmentation",
      "declare global { namespace NodeJS { interface Env { x: 1 } } }",
      "sucrase",
    ],
    ["an exported declared namespace", "export declare namespace Space { const a: number; }", "sucrase"],
    ["an ambient module", 'declare module "x" { export const a: number; }', "sucrase"],
    ["a property called namespace", "const o = { namespace: 1 }; o.namespace;", "sucrase"],
    ["an email in a string", 'const s = "someone@example.com";', "sucrase"],
  ])("%s takes the right path", (_name, source, expected) => {
    expect(path(source)).toBe(expected);
  });

  it("decorators (class, method, parameter) and namespaces with values work through Babel", async () => {
    const ns = await load(
      write(
        "decorated.ts",
        `const seen: string[] = [];
function tag(value: string) { return (target: any) => { target.tag = value; }; }
function log(_target: any, key: string) { seen.push(key); }
function inject(_target: any, _key: any, index: number) { seen.push(\`param \${index}\`); }
@tag("hello")
export class Service {
  constructor(@inject private readonly dep: string) {}
  @log run() { return this.dep; }
}
export namespace Space { export const inside = 42; export function twice() { return inside * 2; } }
export { seen };
`,
      ),
    );
    expect((ns.Service as { tag?: string }).tag).toBe("hello");
    expect(ns.seen).toEqual(expect.arrayContaining(["run", "param 0"]));
    expect(ns.Space).toMatchObject({ inside: 42 });
    expect((ns.Space as { twice(): number }).twice()).toBe(84);
  });
});

describe("an error names the line of the user's file", () => {
  // Multi-line imports, enums, interfaces and a class with parameter properties before the throw:
  // everything sucrase rewrites, so a line that moved would show here.
  const prelude = `import {
  definePlugin,
  Type,
} from "@rein/sdk";
import type { ReinConfig } from "@rein/sdk";
interface Options {
  readonly limit: number;
}
enum Mode {
  Strict,
  Lax,
}
class Holder {
  constructor(
    public readonly options: Options,
  ) {}
}
export const config: ReinConfig | undefined = undefined;
export const schema = Type.Object({});
`;

  it.each([
    ["sucrase", ""],
    ["Babel (a decorator in the file)", "function d(t: any) {}\n@d class Decorated {}\n"],
  ])("a throw at load time, through %s", async (_path, extra) => {
    const text = `${prelude}${extra}const holder = new Holder({ limit: Mode.Lax });
throw new Error("broken at load " + holder.options.limit);
`;
    const file = write(`throws-${extra ? "babel" : "sucrase"}.ts`, text);
    const line = text.split("\n").findIndex((l) => l.startsWith("throw new Error")) + 1;
    const error = await load(file).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Error);
    expect(lineInFile(error, file)).toBe(line);
  });

  it("a throw inside a plugin's setup", async () => {
    const text = `${prelude}export default definePlugin({
  name: "thrower",
  setup() {
    throw new Error("no vault");
  },
});
`;
    const file = write("setup-throws.ts", text);
    const ns = await load(file);
    const line = text.split("\n").findIndex((l) => l.includes('throw new Error("no vault")')) + 1;
    let error: unknown;
    try {
      (ns.default as { setup(): void }).setup();
    } catch (caught) {
      error = caught;
    }
    expect(lineInFile(error, file)).toBe(line);
  });

  it.each([
    ["sucrase rejects it", "export const a = 1;\n\nexport const b = (;\n", 3],
    ["sucrase lets it through", "export const a = 1;\n\nexport const b = {,};\n", 3],
    ["after multi-line imports", `${prelude}export const broken = {,};\n`, prelude.split("\n").length],
  ])("a syntax error where %s", async (name, text, line) => {
    const file = write(`syntax-${name.replace(/\W+/g, "-")}.ts`, text);
    expect(text.split("\n")[line - 1]).toMatch(/[({],?[;,]/);
    const error = await load(file).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Error);
    expect(lineFromError(error, file)).toBe(line);
  });
});

describe("imports keep ESM semantics", () => {
  it("named, default, namespace and re-exports across TypeScript, ESM and CommonJS modules", async () => {
    write(
      "lib/counter.ts",
      "export let count = 0;\nexport function bump() { count++; }\nexport default 'counter';\n",
    );
    write(
      "lib/esm.mjs",
      "export const esm = 'esm';\nexport default function named() { return 'esm default'; }\n",
    );
    write("lib/common.cjs", "exports.common = 'cjs';\nexports.add = (a, b) => a + b;\n");
    write("lib/index.ts", "export * from './counter.ts';\nexport { esm as renamed } from './esm.mjs';\n");
    // ESM syntax in a `.js` file outside any `"type": "module"` package: compiled (JavaScript, no types).
    write(
      "lib/plain.js",
      "import { count } from './counter.ts';\nexport const plain = \"plain \" + typeof count;\n",
    );
    const ns = await load(
      write(
        "imports.ts",
        `import counterName, { bump, count } from "./lib/counter.ts";
import * as all from "./lib/index.ts";
import esmDefault, { esm } from "./lib/esm.mjs";
import common from "./lib/common.cjs";
import { add } from "./lib/common.cjs";
import { plain } from "./lib/plain.js";
bump();
bump();
export const seen = { counterName, count, starCount: all.count, renamed: all.renamed, esm, esmDefault: esmDefault(), common: common.common, sum: add(2, 3), plain };
`,
      ),
    );
    // `count` is a live binding: both bumps show, through the named import and through `export *`.
    expect(ns.seen).toEqual({
      counterName: "counter",
      count: 2,
      starCount: 2,
      renamed: "esm",
      esm: "esm",
      esmDefault: "esm default",
      common: "cjs",
      sum: 5,
      plain: "plain number",
    });
  });

  it("import.meta and dynamic import() refer to the plugin's own file", async () => {
    write("lazy/value.ts", "export const value: string = 'lazy';\n");
    const file = write(
      "lazy/meta.ts",
      `export const meta = { url: import.meta.url, filename: import.meta.filename, dirname: import.meta.dirname };
export const resolved = import.meta.resolve("./value.ts");
export const later = () => import("./value.ts");
`,
    );
    const ns = await load(file);
    expect(ns.meta).toEqual({ url: pathToFileURL(file).href, filename: file, dirname: join(dir, "lazy") });
    expect(String(ns.resolved)).toContain(join(dir, "lazy", "value.ts"));
    expect(await (ns.later as () => Promise<{ value: string }>)()).toMatchObject({ value: "lazy" });
  });
});

describe("the shared packages", () => {
  it("a plugin's @rein/sdk and typebox are the very modules the CLI imported (one copy)", async () => {
    const ns = await load(
      write(
        "shared.ts",
        'import * as sdk from "@rein/sdk";\nimport { Type } from "typebox";\nexport { sdk, Type };\n',
      ),
    );
    const [sdk, typebox] = await Promise.all([import("@rein/sdk"), import("typebox")]);
    expect(ns.sdk).toBe(sdk);
    expect(ns.Type).toBe(typebox.Type);
  });

  it("a subpath (typebox/value) resolves from the plugin's folder like any package", async () => {
    const project = join(dir, "with-modules");
    mkdirSync(join(project, "node_modules"), { recursive: true });
    const typeboxDir = join(createRequire(import.meta.url).resolve("typebox"), "..", "..");
    symlinkSync(typeboxDir, join(project, "node_modules", "typebox"), "dir");
    const ns = await load(
      write(
        "with-modules/value.ts",
        'import { Value } from "typebox/value";\nexport const ok = Value.Check({ type: "number" }, 3);\n',
      ),
    );
    expect(ns.ok).toBe(true);
  });
});

describe("the transpile cache", () => {
  it("a second load reads the cached output; an edited source is transpiled again", async () => {
    const file = write("cached.ts", 'export const origin: string = "transpiled";\n');
    expect((await load(file)).origin).toBe("transpiled");
    const folder = join(cacheDir(), TRANSPILER_ID);
    const cached = readdirSync(folder).filter((name) => name.includes("cached"));
    expect(cached).toHaveLength(1);
    const cachedFile = join(folder, cached[0] as string);
    // A hit reads the entry and writes nothing (a transform would rewrite it).
    const written = statSync(cachedFile).mtimeMs;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await load(file)).origin).toBe("transpiled");
    expect(statSync(cachedFile).mtimeMs).toBe(written);
    // A tampered entry (its MAC no longer holds) is never run: transpiled again (security/transpile-cache.test.ts).
    writeFileSync(cachedFile, readFileSync(cachedFile, "utf8").replace('"transpiled"', '"from the cache"'));
    expect((await load(file)).origin).toBe("transpiled");
    write("cached.ts", 'export const origin: string = "edited";\n');
    expect((await load(file)).origin).toBe("edited");
  });

  it("lives in a folder named for the transform version, which names the installed sucrase", () => {
    const version = (createRequire(import.meta.url)("sucrase/package.json") as { version: string }).version;
    expect(TRANSPILER_ID).toMatch(new RegExp(`^sucrase-${version.replace(/\./g, "\\.")}-r\\d+$`));
  });
});
