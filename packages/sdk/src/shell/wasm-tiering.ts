/**
 * V8 compiles the bash grammar's WebAssembly (1.3 MB, one huge lexer function) with
 * Liftoff, its baseline compiler, then re-compiles hot functions with TurboFan on
 * background threads. For this module that tier-up costs 0.4-0.9 GiB of RSS and seconds
 * of CPU on a loaded machine, and the process cannot exit before it finishes (measured
 * on Node 22, 24 and 26: issue 37). Liftoff code parses a command line in well under a
 * millisecond, so the parser runs on Liftoff alone.
 *
 * V8 reads these flags when a module is compiled and instantiated, so they are set
 * before the first WebAssembly compile of the parser; they hold for the rest of the
 * process (V8 has no per-module switch). `--liftoff-only` alone is not enough at run
 * time on Node 24 (its implications are applied only at start-up), so a tiering budget
 * no function exhausts is set as well: either one keeps TurboFan out.
 */
import { setFlagsFromString } from "node:v8";

/** The V8 flags set before the grammar is compiled. */
export const LIFTOFF_FLAGS = "--liftoff-only --wasm-tiering-budget=2000000000";

let applied = false;

/** Sets {@link LIFTOFF_FLAGS} once per process; `REIN_WASM_TIER_UP=1` leaves V8's defaults. */
export function keepWasmOnLiftoff(env: NodeJS.ProcessEnv = process.env): boolean {
  if (applied) return true;
  if (env.REIN_WASM_TIER_UP === "1") return false;
  setFlagsFromString(LIFTOFF_FLAGS);
  applied = true;
  return true;
}
