import { defineTool, Type } from "@rein/sdk";

/** One tool, so the example shows a tool call travelling through the endpoint. */
export default [
  defineTool({
    name: "clock",
    description: "The current time in an IANA time zone, e.g. Asia/Tokyo",
    parameters: Type.Object({ timeZone: Type.String() }),
    risk: "read",
    execute: async ({ timeZone }) => ({
      content: [
        { type: "text", text: new Date().toLocaleString("en-GB", { timeZone, timeZoneName: "short" }) },
      ],
    }),
  }),
];
