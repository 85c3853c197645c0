/**
 * Adding and removing a plugin's tools in the harness's registry.
 *
 * Invariants: a tool name has one owner. A second registration of a name is an
 * `SdkError` `duplicate_tool` naming both owners (the harness's own tools count as
 * owner `harness`), never a silent replacement, so load order cannot decide which
 * tool the model gets. A registered tool carries its plugin as `owner` (the harness
 * names it when `execute` fails). Removing a tool also drops it from an explicit
 * active-tool list, because the harness rejects active names it does not know.
 */
import type { AgentHarness, AnyAgentTool } from "@rein/harness";
import { duplicateTool } from "./errors.js";

/** Who owns a tool already in the registry: its plugin, or `harness` for the application's own tools. */
export const ownerOf = (tool: AnyAgentTool): string => tool.owner ?? "harness";

/** Registers `tool` for `owner`; returns the registered (owner-stamped) value. */
export function addTool(harness: AgentHarness, tool: AnyAgentTool, owner: string): AnyAgentTool {
  const existing = harness.tools.find((candidate) => candidate.name === tool.name);
  if (existing) throw duplicateTool(tool.name, owner, ownerOf(existing));
  // A copy: tools are immutable values, and a shared `defineTool` value may be listed by several configs.
  const owned: AnyAgentTool = Object.freeze({ ...tool, owner });
  harness.setTools([...harness.tools, owned]);
  return owned;
}

/** Removes a tool this SDK registered (by identity, so a same-named replacement is left alone). */
export function removeTool(harness: AgentHarness, owned: AnyAgentTool): void {
  const remaining = harness.tools.filter((tool) => tool !== owned);
  if (remaining.length === harness.tools.length) return;
  const active = harness.activeToolNames;
  const allNames = harness.tools.map((tool) => tool.name);
  const explicit =
    active.length !== allNames.length || active.some((name, index) => name !== allNames[index]);
  if (explicit && active.includes(owned.name)) {
    harness.setActiveTools(active.filter((name) => name !== owned.name));
    harness.setTools(remaining);
    return;
  }
  try {
    harness.setTools(remaining);
  } catch (error) {
    // An explicit active list that happened to name every tool: drop the name, then retry.
    if (!active.includes(owned.name)) throw error;
    harness.setActiveTools(active.filter((name) => name !== owned.name));
    harness.setTools(remaining);
  }
}
