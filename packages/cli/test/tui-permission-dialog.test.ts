/**
 * The terminal UI's permission dialog shows what the gates decided on, from the
 * request itself: each simple command of the parsed shell line (wrappers
 * included, what could not be understood named), each canonical path with the
 * model's spelling and whether it is outside the project, the sandbox and an
 * escape from it, who asks and why; every answer the plugin offers on a line of
 * its own, taken from its prompt text; redaction masks applied to what is shown.
 */
import type { PermissionRequest } from "@rein/harness";
import { promptText } from "@rein/plugin-permissions";
import { analyzeShell } from "@rein/sdk/shell";
import { describe, expect, it } from "vitest";
import { choicesOf, dialogRows, PermissionDialog } from "../src/tui/permission-dialog.js";
import { colorsFor } from "../src/ui/terminal.js";

const c = colorsFor({ isTTY: false } as NodeJS.WriteStream);
const verdict = { decision: "ask" as const, by: "policy:no-push", reason: "pushing publishes commits" };

async function shellRequest(
  command: string,
  sandbox = { mode: "workspace-write", unsandboxedRequested: false },
) {
  const facts = { command: await analyzeShell(command), sandbox };
  return {
    call: { name: "bash", args: { command }, risk: "exec", facts },
    verdict,
  } as unknown as PermissionRequest;
}

describe("the permission dialog", () => {
  it("lists each simple command of the parsed line, the sandbox, who asks and why", async () => {
    const request = await shellRequest("sudo git -C repo push origin main && echo $(cat token)");
    const rows = Object.fromEntries(dialogRows(request, (t) => t));
    // The substitution is its own command, and stays visible where it is used.
    expect(rows.command).toBe('sudo git -C repo push origin main  ·  echo "$(cat token)"  ·  cat token');
    expect(rows.sandbox).toBe("workspace-write");
    expect(rows["asked by"]).toBe("policy:no-push");
    expect(rows.why).toBe("pushing publishes commits");
    expect(rows.risk).toBe("exec");
    const outside = await shellRequest("make deploy", {
      mode: "workspace-write",
      unsandboxedRequested: true,
    });
    expect(Object.fromEntries(dialogRows(outside, (t) => t)).sandbox).toBe(
      "workspace-write, asks to run OUTSIDE it",
    );
  });

  it("shows canonical paths with the model's spelling, marks one outside the project, and masks what redaction hides", () => {
    const request = {
      call: {
        name: "write",
        args: { path: "src/../../etc/app.conf", content: "key=sk-secret-123" },
        risk: "write",
        facts: {
          paths: [
            {
              arg: "path",
              kind: "file",
              input: "src/../../etc/app.conf",
              absolute: "/etc/app.conf",
              relative: "../etc/app.conf",
              inside: false,
            },
          ],
        },
      },
      verdict,
    } as unknown as PermissionRequest;
    const rows = dialogRows(request, (t) => t.replaceAll("sk-secret-123", "[redacted]"));
    expect(rows).toContainEqual(["path", "/etc/app.conf (as src/../../etc/app.conf)  OUTSIDE the project"]);
    expect(rows[0]?.[1]).toBe('write {"path":"src/../../etc/app.conf","content":"key=[redacted]"}');
    expect(JSON.stringify(rows)).not.toContain("sk-secret-123");
  });

  it("offers the plugin's answers one per line, each with what it grants, and a key answers", async () => {
    const request = await shellRequest("git push origin main");
    const text = promptText(request, "call", ".rein/local.json");
    const choices = choicesOf(text);
    expect(choices.map((choice) => choice.key)).toEqual(["y", "s", "a", "n"]);
    expect(choices[1]?.label).toMatch(/^allow for this session \(bash\(git push origin main\)/);
    expect(choices[2]?.label).toMatch(
      /^always in this project \(bash\(git push \*\); saved in \.rein\/local\.json\)$/,
    );
    const answers: string[] = [];
    const dialog = new PermissionDialog(
      request,
      choices,
      (t) => t,
      c,
      (key) => answers.push(key),
    );
    const lines = dialog.render(100);
    expect(lines.some((line) => line.includes("[s] allow for this session"))).toBe(true);
    expect(lines.every((line) => line.length <= 100)).toBe(true);
    dialog.handleInput("x");
    dialog.handleInput("S");
    dialog.handleInput("\x1b");
    expect(answers).toEqual(["s", "n"]);
  });
});
