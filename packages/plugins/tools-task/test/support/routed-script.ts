/**
 * A scripted model shared by a parent and its children: each request is answered
 * from the conversation its first user message names, at the turn it is at, so
 * children running in parallel get their own replies whatever order they ask in.
 */
import type { ScriptReply, ScriptRequest, ScriptStep } from "@rein/sdk";

export function routedScript(
  conversations: Record<string, readonly ScriptReply[]>,
  steps = 60,
): ScriptStep[] {
  const step = ({ context }: ScriptRequest): ScriptReply => {
    const first = context.messages.find((message) => message.role === "user");
    const content = first?.content;
    const key =
      typeof content === "string"
        ? content
        : (content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");
    const replies = conversations[key];
    if (!replies) throw new Error(`no scripted conversation starts with ${JSON.stringify(key)}`);
    const turn = context.messages.filter((message) => message.role === "assistant").length;
    return replies[turn] ?? "done";
  };
  return Array.from({ length: steps }, () => step);
}

export const call = (id: string, name: string, args: Record<string, unknown>): ScriptReply => ({
  toolCalls: [{ id, name, args }],
});
