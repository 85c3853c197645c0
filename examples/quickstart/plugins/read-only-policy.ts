import { definePlugin, Type } from "@rein/sdk";

/** Denies writes to protected files, with the reason shown to the model and the user. */
export default definePlugin({
  name: "read-only-policy",
  options: Type.Object({ protect: Type.Array(Type.String()) }),
  setup(rein, options) {
    rein.hooks.toolGate.tapPromise("read-only-policy", async (call) => {
      if (call.risk !== "write") return undefined;
      const path = String(call.args.path ?? "");
      return options.protect.includes(path)
        ? { decision: "deny", reason: `${path} is protected in this quick start`, rule: "protected-files" }
        : undefined;
    });
  },
});
