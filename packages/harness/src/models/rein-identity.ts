/**
 * How Rein's requests identify themselves to providers: a `User-Agent` of Rein's own
 * and provider attribution headers naming Rein (OpenRouter, NVIDIA NIM, OpenCode), never pi.
 * Where a client appends Rein's `User-Agent` to its own as one product token (the AWS SDK,
 * for Bedrock), it is `rein/<version>` alone: the SDK turns the spaces, parentheses and
 * semicolons of the detailed form into dashes.
 */
import { createRequire } from "node:module";
import type { ClientIdentity, SimpleStreamOptions } from "@earendil-works/pi-ai";

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

/** APIs whose client takes the `User-Agent` as a single product token. */
const TOKEN_USER_AGENT_APIS = new Set(["bedrock-converse-stream"]);

/**
 * The identity a request to `api` needs on top of the collection's, if any: for Bedrock,
 * a `User-Agent` of `rein/<version>` (the AWS SDK appends it to its own).
 */
export function reinIdentityForApi(api: string): ClientIdentity | undefined {
  return TOKEN_USER_AGENT_APIS.has(api) ? { userAgent: { custom: `rein/${harnessVersion()}` } } : undefined;
}

/**
 * `options` for one request to `api`, with the identity that API needs on top of the
 * collection's (see `reinIdentityForApi`); unchanged when it needs none or the caller
 * already set a `User-Agent`. Every stream function of Rein's (the harness's, the CLI's)
 * passes its options through this.
 */
export function withReinIdentity<T extends SimpleStreamOptions>(
  api: string,
  options: T | undefined,
): T | undefined {
  const identity = reinIdentityForApi(api);
  if (!identity || options?.identity?.userAgent !== undefined) return options;
  return { ...options, identity: { ...options?.identity, ...identity } } as T;
}
