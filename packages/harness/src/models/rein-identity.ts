/**
 * How Rein's requests identify themselves to providers: a `User-Agent` of Rein's own
 * and provider attribution headers naming Rein (OpenRouter, NVIDIA NIM, OpenCode), never pi.
 */
import { createRequire } from "node:module";
import type { ClientIdentity } from "@earendil-works/pi-ai";

const REIN_URL = "https://github.com/rein-dev/rein";

let version: string | undefined;
function harnessVersion(): string {
  version ??= (createRequire(import.meta.url)("../../package.json") as { version: string }).version;
  return version;
}

/** The identity every Rein model collection is created with. */
export function reinIdentity(): ClientIdentity {
  const runtime = `node/${process.versions.node}`;
  return {
    userAgent: { custom: `rein/${harnessVersion()} (${process.platform}; ${runtime}; ${process.arch})` },
    attribution: { name: "rein", url: REIN_URL, categories: ["cli-agent"] },
  };
}
