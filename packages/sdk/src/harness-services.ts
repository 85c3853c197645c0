/**
 * Services plugins of one harness share (walk exclusions, text masks): one value
 * per harness, reached from any plugin's `rein` object.
 *
 * Invariant: a service is per harness, never process-wide, so two harnesses in one
 * process (tests, a server) never see each other's rules or masks.
 */
import type { AgentHarness } from "@rein/harness";

const harnessOfRein_ = new WeakMap<object, AgentHarness>();
const services = new WeakMap<AgentHarness, Map<symbol, unknown>>();

/** Called by the plugin host for every `rein` object it creates. */
export function bindRein(rein: object, harness: AgentHarness): void {
  harnessOfRein_.set(rein, harness);
}

/** The harness the plugin host bound a `rein` object to, if any. */
export function harnessOfRein(rein: object): AgentHarness | undefined {
  return harnessOfRein_.get(rein);
}

/** The harness a `rein` object (or a harness itself) belongs to. */
function harnessOf(owner: object): AgentHarness | undefined {
  return (
    harnessOfRein_.get(owner) ?? (services.has(owner as AgentHarness) ? (owner as AgentHarness) : undefined)
  );
}

/** The harness's instance of a service, created on first use. `owner`: a `rein` object or a harness. */
export function sharedService<T>(owner: object, key: symbol, create: () => T): T {
  const harness = harnessOf(owner) ?? (owner as AgentHarness);
  let table = services.get(harness);
  if (!table) {
    table = new Map();
    services.set(harness, table);
  }
  if (!table.has(key)) table.set(key, create());
  return table.get(key) as T;
}
