/**
 * `@rein-examples/tools-time`: a tool pack is a plain default export of
 * `defineTool(...)` values. List it in `plugins` and every tool is registered.
 */
import { defineTool, Type } from "@rein/sdk";

const zoneError = (timeZone: string) =>
  `unknown time zone "${timeZone}" (expected an IANA name such as Europe/Paris)`;

function checkZone(timeZone: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en", { timeZone });
    return undefined;
  } catch {
    return zoneError(timeZone);
  }
}

export const now = defineTool({
  name: "now",
  label: "Current time",
  description: "The current date and time in an IANA time zone (default UTC).",
  parameters: Type.Object({ timeZone: Type.Optional(Type.String({ description: "e.g. Europe/Paris" })) }),
  risk: "read",
  idempotent: true,
  execute: async ({ timeZone = "UTC" }) => {
    const problem = checkZone(timeZone);
    if (problem) return { content: [{ type: "text", text: problem }], isError: true };
    const text = new Date().toLocaleString("sv-SE", { timeZone, hour12: false });
    return { content: [{ type: "text", text: `${text} ${timeZone}` }], details: { timeZone } };
  },
});

export const daysBetween = defineTool({
  name: "days_between",
  label: "Days between dates",
  description: "Whole days from one ISO date (YYYY-MM-DD) to another; negative when `to` is earlier.",
  parameters: Type.Object({
    from: Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$" }),
    to: Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$" }),
  }),
  risk: "read",
  idempotent: true,
  execute: async ({ from, to }) => {
    const start = Date.parse(`${from}T00:00:00Z`);
    const end = Date.parse(`${to}T00:00:00Z`);
    if (Number.isNaN(start) || Number.isNaN(end)) {
      return {
        content: [{ type: "text", text: `invalid date: ${Number.isNaN(start) ? from : to}` }],
        isError: true,
      };
    }
    const days = Math.round((end - start) / 86_400_000);
    return { content: [{ type: "text", text: String(days) }], details: { days } };
  },
});

export default [now, daysBetween];
