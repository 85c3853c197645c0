/**
 * Turns raw benchmark numbers into table rows: what was measured, the ratio
 * measured side by side in the same run, the target and whether it is met.
 */
import { TURN_LABELS } from "./turns.mjs";

const us = (value) => `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0)} µs`;
const ms = (value) => `${value.toFixed(value < 100 ? 1 : 0)} ms`;
const mib = (value) => `${value.toFixed(0)} MiB`;
const x = (value) => `${value.toFixed(2)}×`;

/** `a vs b (r×)` for one CPU measure of the tracing row, or n/a where the runtime lacks it. */
function cpuPair(result, key) {
  const [a, b] = [result.reinOtel[key], result.reinMemory[key]];
  return Number.isFinite(a) && Number.isFinite(b) ? `${us(a)} vs ${us(b)} (${x(a / b)})` : "n/a";
}

function row(group, name, measured, ratio, target) {
  const out = { group, name, measured, ratio: ratio === undefined ? "" : ratio.text, target: "", met: "" };
  if (target) {
    out.target = `≤ ${x(target.max)}`;
    out.met = !Number.isFinite(ratio.value) ? "n/a (noise)" : ratio.value <= target.max ? "yes" : "**no**";
  }
  return out;
}

export function turnRows({ overhead, growth, turns, sizes }) {
  const rows = [];
  for (const variant of ["flat", "full"]) {
    const group = `1. Turn overhead, ${turns} tool turns + answer, provider sees ${
      variant === "flat" ? "last message only (flat)" : "whole context (full)"
    }`;
    const result = overhead[variant];
    const piOverhead = result.pi.overhead;
    for (const [id, { perTurn, overhead: above }] of Object.entries(result)) {
      const measured =
        id === "floor" ? `${us(perTurn)}/turn` : `${us(perTurn)}/turn, ${us(above)} above floor`;
      // A non-positive reference means the floor swallowed pi's overhead in noise: no ratio then.
      const value = piOverhead > 0 ? above / piOverhead : Number.NaN;
      const ratio =
        id === "floor"
          ? undefined
          : { value, text: Number.isNaN(value) ? "n/a" : `${x(value)} pi's overhead` };
      rows.push(
        row(group, TURN_LABELS[id], measured, ratio, id === "reinJsonlDurable" ? { max: 1 } : undefined),
      );
    }
    // The tracing plugin's cost: the whole per-turn time against the same harness without it.
    if (result.reinOtel && result.reinMemory) {
      const value = result.reinOtel.perTurn / result.reinMemory.perTurn;
      rows.push(
        row(
          group,
          "Rein + @rein/plugin-otel vs Rein in memory, per turn",
          `${us(result.reinOtel.perTurn)} vs ${us(result.reinMemory.perTurn)} per turn (judged: wall time); CPU per turn, harness thread ${cpuPair(result, "threadCpu")}, whole process ${cpuPair(result, "processCpu")}`,
          { value, text: `${x(value)} Rein in memory` },
          { max: 1.15 },
        ),
      );
    }
  }
  const [small, , large] = sizes;
  const group = `1b. Growth, flat: per-turn cost at ${sizes.join(" / ")} tool turns`;
  for (const id of Object.keys(growth[250])) {
    const values = [250, 1000, 4000].map((t) => growth[t][id].perTurn);
    const above = [250, 1000, 4000].map((t) => growth[t][id].overhead);
    const ratio = values[2] / values[0];
    const measured = `${values.map((v) => v.toFixed(0)).join(" / ")} µs/turn (above floor: ${above
      .map((v) => v.toFixed(0))
      .join(" / ")})`;
    const target = id.startsWith("rein") ? { max: 1.25 } : undefined;
    rows.push(
      row(
        group,
        TURN_LABELS[id],
        measured,
        { value: ratio, text: `${x(ratio)} (${large} vs ${small})` },
        target,
      ),
    );
  }
  return rows;
}

export function hookRows(hooks) {
  const group = "2. Hook dispatch: one toolCall + toolGate + toolResult pass";
  return Object.entries(hooks).map(([taps, { rein, plain }]) =>
    row(
      group,
      `${taps} tap${taps === "1" ? "" : "s"} per hook: Rein runners vs plain for-loop`,
      `${us(rein)} vs ${us(plain)} per pass`,
      { value: rein / plain, text: `${x(rein / plain)} the loop` },
      taps === "50" ? { max: 2 } : undefined,
    ),
  );
}

export function sessionRows(sessions) {
  const rows = [];
  const group = "3. Sessions (JSONL): Rein Session vs pi SessionManager, same messages";
  const sizes = Object.keys(sessions)
    .map(Number)
    .sort((a, b) => a - b);
  const [small, large] = sizes;
  const label = (n) => sessions[n].rein.entries.toLocaleString("en-US");
  for (const n of sizes) {
    const { rein, pi } = sessions[n];
    rows.push(
      row(
        group,
        `append ${label(n)} entries (${mib(rein.fileMiB)} / ${mib(pi.fileMiB)} file)`,
        `${ms(rein.appendMs)} vs ${ms(pi.appendMs)}`,
        { value: rein.appendMs / pi.appendMs, text: `${x(rein.appendMs / pi.appendMs)} pi` },
      ),
    );
    rows.push(
      row(
        group,
        `reopen + build context, ${label(n)} entries`,
        `${ms(rein.reopenMs)} vs ${ms(pi.reopenMs)}`,
        { value: rein.reopenMs / pi.reopenMs, text: `${x(rein.reopenMs / pi.reopenMs)} pi` },
        n === large ? { max: 0.2 } : undefined,
      ),
    );
    const { floor } = sessions[n];
    if (floor !== undefined) {
      rows.push(
        row(
          group,
          `floor: read + JSON.parse of every line, ${label(n)} entries (Rein's file)`,
          `${ms(floor.reopenMs)} (Rein ${x(rein.reopenMs / floor.reopenMs)} the floor)`,
          { value: floor.reopenMs / pi.reopenMs, text: `${x(floor.reopenMs / pi.reopenMs)} pi` },
        ),
      );
    }
    rows.push(
      row(
        group,
        `peak RSS of that reopen, ${label(n)} entries`,
        `${mib(rein.maxRssMiB)} vs ${mib(pi.maxRssMiB)} (after imports: ${mib(rein.baseRssMiB)} vs ${mib(pi.baseRssMiB)})`,
        { value: rein.maxRssMiB / pi.maxRssMiB, text: `${x(rein.maxRssMiB / pi.maxRssMiB)} pi` },
        n === large ? { max: 0.5 } : undefined,
      ),
    );
  }
  if (small !== undefined && large !== undefined) {
    const growth = (impl) => sessions[large][impl].reopenMs / sessions[small][impl].reopenMs;
    rows.push(
      row(
        group,
        `reopen time, ${label(large)} vs ${label(small)} entries (10× the entries)`,
        `Rein ${x(growth("rein"))}, pi ${x(growth("pi"))}`,
        { value: growth("rein"), text: `Rein ${x(growth("rein"))}` },
        { max: 12 },
      ),
    );
  }
  return rows;
}

export function startupRows({ version, plugins, transpilers, trust }) {
  const rows = [];
  const group = "4. Start-up and plugins: each measurement a fresh process";
  const { node, rein, pi } = version;
  rows.push(row(group, "`node -e 0` (the floor)", `${ms(node.ms)}, peak RSS ${mib(node.maxRssMiB)}`));
  rows.push(
    row(
      group,
      "`rein --version` vs `pi --version`",
      `${ms(rein.ms)} vs ${ms(pi.ms)} (above the floor: ${ms(rein.ms - node.ms)} vs ${ms(pi.ms - node.ms)}); peak RSS ${mib(rein.maxRssMiB)} vs ${mib(pi.maxRssMiB)}`,
      { value: rein.ms / pi.ms, text: `${x(rein.ms / pi.ms)} pi` },
      { max: 0.15 },
    ),
  );
  const { rein: r, pi: p } = plugins;
  for (const [phase, label, max] of [
    ["cold", "cold (empty transpile cache)", 0.5],
    ["warm", "warm (cache from the cold run)", 1],
  ]) {
    const a = r[phase];
    const b = p[phase];
    rows.push(
      row(
        group,
        `${r.count} TS plugins, ${label}: Rein \`buildAgent\` vs pi \`discoverAndLoadExtensions\``,
        `${ms(a.ms)} vs ${ms(b.ms)} (CPU time of the call: ${ms(a.cpuMs)} vs ${ms(b.cpuMs)}; host imports before it, not timed: ${ms(a.importMs)} vs ${ms(b.importMs)}; process start to loaded: ${ms(a.totalMs)} vs ${ms(b.totalMs)}; peak RSS ${mib(a.maxRssMiB)} vs ${mib(b.maxRssMiB)}${
          phase === "cold" ? `; files transpiled: ${r.cachedFiles} vs ${p.cachedFiles}` : ""
        })`,
        { value: a.ms / b.ms, text: `${x(a.ms / b.ms)} pi` },
        { max },
      ),
    );
  }
  if (transpilers) {
    const { sucrase, babel } = transpilers;
    rows.push(
      row(
        group,
        `compiler alone, ${r.count} plugin files: Rein's sucrase transform vs jiti's Babel (pi's)`,
        `load ${ms(sucrase.loadMs)} + files ${ms(sucrase.ms)} vs load ${ms(babel.loadMs)} + files ${ms(babel.ms)}`,
        {
          value: (sucrase.loadMs + sucrase.ms) / (babel.loadMs + babel.ms),
          text: `${x((sucrase.loadMs + sucrase.ms) / (babel.loadMs + babel.ms))} Babel`,
        },
      ),
    );
  }
  if (trust) {
    const out = row(
      group,
      `trust check at start-up, ${trust.count} recorded project files (verify mode)`,
      `record read and every config name and recorded file hashed ${ms(trust.startMs)} + every module through the gate ${ms(trust.admitMs)}`,
      { value: trust.ms, text: ms(trust.ms) },
    );
    out.target = "≤ 5 ms";
    out.met = trust.ms <= 5 ? "yes" : "**no**";
    rows.push(out);
  }
  return rows;
}

export function sandboxRows(sandbox) {
  const group = "5. Shell sandbox: one trivial `bash` call, sandboxed vs bare";
  if (sandbox.skipped) return [row(group, "sandboxed vs bare", `skipped: ${sandbox.skipped}`)];
  const added = sandbox.sandboxed - sandbox.bare;
  const out = row(
    group,
    "workspace-write, no network vs sandbox off",
    `${ms(sandbox.sandboxed)} vs ${ms(sandbox.bare)} per call (bwrap alone, no tool: ${ms(sandbox.bwrap)})`,
    {
      value: added,
      text: `+${ms(added)} per call`,
    },
  );
  out.target = "≤ +30 ms";
  out.met = added <= 30 ? "yes" : "**no**";
  return [out];
}
