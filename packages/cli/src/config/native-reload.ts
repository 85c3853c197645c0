/**
 * Fresh loads of native ES modules. jiti evaluates `.ts` files itself, but hands
 * `.mjs` files (and `.js` in a `"type": "module"` package) to Node's `import()`,
 * whose module map never forgets a URL: an edited `.mjs` plugin would reload as
 * its old self under `rein dev`. While a fresh load runs, a resolve hook gives
 * every project file it reaches natively a new URL (`?rein-reload=N`), so Node
 * evaluates the file's current bytes.
 *
 * Invariant: only files imported natively by jiti itself, or by a file already
 * given a new URL, through a relative or absolute specifier, outside any
 * `node_modules` folder, get a new URL; packages keep their one copy (the SDK's
 * classes and symbols stay the CLI's). Outside a fresh load the hook changes nothing.
 */
import module from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
interface ResolveContext {
  parentURL?: string;
}
/** Node >= 22.15's synchronous hooks (the project's @types/node predates them). */
type RegisterHooks = (hooks: {
  resolve(
    specifier: string,
    context: ResolveContext,
    nextResolve: (specifier: string, context: ResolveContext) => ResolveResult,
  ): ResolveResult;
}) => unknown;

const MARK = "rein-reload";
let generation = 0;
let active = 0;
let hooked = false;
let jitiFolder: string | undefined;

function isPathSpecifier(specifier: string): boolean {
  return /^(\.{1,2}(\/|$)|\/|file:)/.test(specifier);
}

function isReloaded(url: string | undefined): boolean {
  return url !== undefined && new URL(url).searchParams.has(MARK);
}

function fromJiti(url: string | undefined): boolean {
  if (url === undefined || !url.startsWith("file:") || jitiFolder === undefined) return false;
  return fileURLToPath(url).startsWith(jitiFolder);
}

function register(): void {
  if (hooked) return;
  hooked = true;
  const registerHooks = (module as unknown as { registerHooks?: RegisterHooks }).registerHooks;
  if (registerHooks === undefined) return; // Node < 22.15: below the engines range; native modules reload stale.
  jitiFolder = dirname(dirname(fileURLToPath(import.meta.resolve("jiti"))));
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const result = nextResolve(specifier, context);
      if (active === 0 || !result.url.startsWith("file:") || !isPathSpecifier(specifier)) return result;
      if (result.url.includes("/node_modules/")) return result;
      if (!fromJiti(context.parentURL) && !isReloaded(context.parentURL)) return result;
      const url = new URL(result.url);
      url.searchParams.set(MARK, String(generation));
      return { ...result, url: url.href };
    },
  });
}

/** Runs `load` as one fresh load: native project modules it reaches are evaluated anew. */
export async function withFreshNativeModules<T>(load: () => Promise<T>): Promise<T> {
  register();
  generation += 1;
  active += 1;
  try {
    return await load();
  } finally {
    active -= 1;
  }
}
