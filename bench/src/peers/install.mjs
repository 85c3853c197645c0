/**
 * Installs the peer CLIs from the npm registry at pinned versions, each into its
 * own folder of the cache (`$REIN_BENCH_CACHE`, default `~/.cache/rein-bench`:
 * outside the temp dir, where Codex refuses to put its helper links), once. A peer
 * that cannot be installed (no network, no native build for this platform) is
 * skipped with the reason, never fatal. Install scripts are not run: the native
 * binaries come as optional dependencies and are started directly, as Claude
 * Code's postinstall (which copies its binary over the placeholder bin) and
 * Codex's launcher would start them.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** The peers and the exact versions compared (engineering-notes.md, "Facts for the third wave"). */
export const PEERS = {
  codex: {
    label: "Codex",
    package: "@openai/codex",
    version: "0.171.0",
    runtime: "native (Rust)",
    binary: (root) => {
      const triple = { x64: "x86_64-unknown-linux-musl", arm64: "aarch64-unknown-linux-musl" }[process.arch];
      const arch = { x64: "x64", arm64: "arm64" }[process.arch];
      return path.join(root, `node_modules/@openai/codex-linux-${arch}/vendor/${triple}/bin/codex`);
    },
  },
  claude: {
    label: "Claude Code",
    package: "@anthropic-ai/claude-code",
    version: "2.1.332",
    runtime: "native (Bun)",
    binary: (root) => path.join(root, `node_modules/@anthropic-ai/claude-code-linux-${process.arch}/claude`),
  },
  pi: {
    label: "pi",
    package: "@earendil-works/pi-coding-agent",
    version: "1.6.0",
    runtime: "Node",
    binary: (root) => path.join(root, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"),
  },
};

export function cacheDir() {
  return process.env.REIN_BENCH_CACHE ?? path.join(os.homedir(), ".cache", "rein-bench");
}

function npmInstall(dir, spec) {
  return new Promise((resolve, reject) => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    execFile(
      npm,
      ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", "--prefix", dir, spec],
      { timeout: 10 * 60_000, maxBuffer: 16 * 2 ** 20 },
      (error, _stdout, stderr) => {
        if (error) reject(new Error(stderr.trim().split("\n").slice(-3).join(" ") || error.message));
        else resolve();
      },
    );
  });
}

function installedVersion(root, name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}

/**
 * Each peer as `{ id, label, version, runtime, binary }`, or `{ id, label, skipped }`
 * when it could not be installed or has no binary here.
 */
export async function ensurePeers({ log, only = Object.keys(PEERS) }) {
  const out = [];
  for (const id of only) {
    const peer = PEERS[id];
    const root = path.join(cacheDir(), "peers", `${id}-${peer.version}`);
    try {
      if (installedVersion(root, peer.package) !== peer.version) {
        log(`peers: installing ${peer.package}@${peer.version} into ${root}`);
        fs.mkdirSync(root, { recursive: true });
        fs.writeFileSync(path.join(root, "package.json"), '{ "private": true }\n');
        await npmInstall(root, `${peer.package}@${peer.version}`);
      }
      const binary = peer.binary(root);
      if (!fs.existsSync(binary))
        throw new Error(`no ${process.platform}-${process.arch} binary at ${binary}`);
      out.push({ id, label: peer.label, version: peer.version, runtime: peer.runtime, binary });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      log(`peers: skipping ${peer.label} ${peer.version}: ${reason}`);
      out.push({ id, label: peer.label, version: peer.version, skipped: reason });
    }
  }
  return out;
}
