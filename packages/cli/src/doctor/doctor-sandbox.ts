/**
 * `rein doctor`'s sandbox check: runs one trivial command through a real sandboxed
 * bash tool and says whether the shell's OS sandbox works here, and if not, why and
 * what to install. It fails the doctor only when the config uses the sandbox.
 */
import { checkSandbox, SANDBOX_ADVICE, type SandboxOptions } from "@rein/tools-shell";
import type { ResolvedEntry } from "../config/resolve-plugins.js";

export interface SandboxDoctorCheck {
  name: "sandbox";
  ok: boolean;
  detail: string;
  hint?: string;
}

const SHELL_PLUGIN = "@rein/tools-shell";

/** The sandbox options of the config's `@rein/tools-shell` entry, or undefined when it has none. */
function shellSandbox(plugins: readonly ResolvedEntry[]): SandboxOptions | undefined {
  for (const { entry } of plugins) {
    const [plugin, options] = Array.isArray(entry) ? entry : [entry, undefined];
    if ((plugin as { name?: unknown }).name !== SHELL_PLUGIN) continue;
    return ((options as { sandbox?: SandboxOptions } | undefined)?.sandbox ?? {}) as SandboxOptions;
  }
  return undefined;
}

export async function sandboxDoctorCheck(
  plugins: readonly ResolvedEntry[] | undefined,
): Promise<SandboxDoctorCheck> {
  const configured = plugins === undefined ? undefined : shellSandbox(plugins);
  const mode = configured?.mode ?? "workspace-write";
  const probe = await checkSandbox(configured ?? {});
  const here = probe.ok
    ? `works on this machine (bubblewrap; a trivial command took ${probe.ms} ms)`
    : `does not work on this machine: ${(probe.reason ?? "").replace(SANDBOX_ADVICE, "").replace("The command was not run.", "").trim()}`;
  if (configured === undefined) {
    return { name: "sandbox", ok: true, detail: `not used (no ${SHELL_PLUGIN} in the config); ${here}` };
  }
  if (mode === "off") {
    return {
      name: "sandbox",
      ok: true,
      detail: `off in the ${SHELL_PLUGIN} options: commands run unsandboxed; ${here}`,
    };
  }
  if (probe.ok) return { name: "sandbox", ok: true, detail: `${mode}: ${here}` };
  return { name: "sandbox", ok: false, detail: `${mode}: ${here}`, hint: SANDBOX_ADVICE };
}
