/**
 * The one place every module Rein loads passes before it runs (invariant 9):
 * jiti's transpiled files through the loader's transform (module-loader.ts calls
 * `admitModule` with the very bytes it compiles), and everything Node loads
 * natively (ESM and CommonJS packages, what they import, JSON) through a
 * synchronous `module.registerHooks` load hook. A gate that throws stops the file
 * before it is evaluated, so an untrusted module never runs, whatever imported it.
 *
 * Invariant: with no gate open, admitting is a no-op (Rein's own modules load as
 * before); the hook is registered once per process. An observer (`observeModules`,
 * the hook daemon's list of files to re-check before each decision) sees every
 * file admitted, whether a gate is open or not; it cannot refuse one.
 */
import { readFileSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";
import { trustError } from "../errors.js";

export type Admit = (file: string, source: string | Uint8Array) => void;

/** Node >= 22.15's synchronous hooks (the project's @types/node predates them). */
interface LoadResult {
  format?: string | null;
  source?: string | Uint8Array | null;
}
type RegisterHooks = (hooks: {
  load(url: string, context: object, nextLoad: (url: string, context: object) => LoadResult): LoadResult;
}) => unknown;

let gate: Admit | undefined;
let hooked = false;
const observers = new Set<(file: string) => void>();

/** Checks `file` (its bytes about to run) against the open gate. */
export function admitModule(file: string, source: string | Uint8Array): void {
  for (const observe of observers) observe(file);
  gate?.(file, source);
}

/** Opens `admit` as the process's gate; returns the closer. */
export function openModuleGate(admit: Admit): () => void {
  gate = admit;
  hookNativeLoads();
  return () => {
    if (gate === admit) gate = undefined;
  };
}

/** Calls `observe` with every module file loaded from now on (jiti's and Node's); returns the stopper. */
export function observeModules(observe: (file: string) => void): () => void {
  observers.add(observe);
  hookNativeLoads();
  return () => {
    observers.delete(observe);
  };
}

function hookNativeLoads(): void {
  if (!hooked) {
    hooked = true;
    const registerHooks = (module as unknown as { registerHooks?: RegisterHooks }).registerHooks;
    // Node >= 22.19 is required (package engines); without the hook nothing native could be checked.
    if (registerHooks === undefined) {
      throw trustError(
        `Node ${process.version} has no module.registerHooks, so project code cannot be checked before it runs`,
        { hint: "run Rein on Node >= 22.19" },
      );
    }
    registerHooks({
      load(url, context, nextLoad) {
        const result = nextLoad(url, context);
        if (url.startsWith("file:")) {
          const file = fileURLToPath(url);
          // Node reads some CommonJS sources itself later: check the file's bytes then.
          if (gate !== undefined) admitModule(file, result.source ?? readFileSync(file));
          else for (const observe of observers) observe(file);
        }
        return result;
      },
    });
  }
}
