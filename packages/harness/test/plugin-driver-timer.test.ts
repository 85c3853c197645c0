/**
 * The PluginDriver's one watchdog timer keeps the process alive exactly while a
 * plugin call is running: a process whose fast taps all answered exits at once
 * (not after the 30 s tap timeout), and one whose tap still waits is kept alive
 * until that tap times out. Run in child processes against the built harness
 * (`tsc -b`), so what is measured is the real event loop.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const dist = path.resolve(import.meta.dirname, "../dist/hooks");

/** Runs a module body in a fresh node; returns its exit status, output and wall time. */
function runChild(body: string) {
  const script = `
    import { PluginDriver } from ${JSON.stringify(`${dist}/plugin-driver.js`)};
    const driver = new PluginDriver();
    const site = { plugin: "p", hook: "toolGate" };
    ${body}
  `;
  const started = Date.now();
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 20_000,
  });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr, ms: Date.now() - started };
}

describe("the watchdog timer and the process lifetime", () => {
  it("after a chain of fast calls under a 30 s deadline, the process exits at once", () => {
    const child = runChild(`
      for (let i = 0; i < 100; i++) {
        await driver.run(site, { timeoutMs: 30_000 }, () => Promise.resolve(i));
      }
      console.log("done");
    `);
    expect(child.stderr).toBe("");
    expect(child.stdout.trim()).toBe("done");
    expect(child.status).toBe(0);
    expect(child.ms).toBeLessThan(10_000);
  });

  it("a call still waiting keeps the process alive until its deadline fails it", () => {
    const child = runChild(`
      await driver.run(site, { timeoutMs: 30_000 }, () => Promise.resolve(1));
      const started = Date.now();
      driver.run(site, { timeoutMs: 600 }, () => new Promise(() => {})).catch((error) => {
        console.log(error.pluginCode, Date.now() - started >= 590);
      });
    `);
    expect(child.stderr).toBe("");
    expect(child.stdout.trim()).toBe("timeout true");
    expect(child.status).toBe(0);
  });
});
