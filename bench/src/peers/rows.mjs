/**
 * The peers benchmark's table rows: one row of medians per contender, then Rein's
 * target rows, each a ratio against the best peer in the same run (issue 37):
 * start → first request ≤ 1.0× the fastest peer and ≤ 0.5× the fastest Node-based
 * one; no first-call penalty (one call − text only ≤ 2× the per-call overhead);
 * per-call overhead ≤ 1.0× the best peer's, unsandboxed and sandboxed; exit after
 * the last response ≤ 50 ms; peak RSS ≤ 0.8× the lightest peer's on every Node.
 */
export const PEERS_GROUP =
  "8. Peers: `rein run` vs Claude Code, Codex, pi on one scripted model server (fresh process each run)";

const ms = (value) => `${value.toFixed(0)} ms`;
const mib = (value) => `${value.toFixed(0)} MiB`;
const x = (value) => `${value.toFixed(2)}×`;

function target(name, measured, value, text, max, unit = "ratio") {
  const met = !Number.isFinite(value) ? "n/a" : value <= max ? "yes" : "**no**";
  return {
    group: PEERS_GROUP,
    name,
    measured,
    ratio: text,
    target: unit === "ms" ? `≤ ${max} ms` : `≤ ${x(max)}`,
    met,
    peers: true,
  };
}

function best(list, key) {
  return list.reduce((a, b) => (b.result[key] < a.result[key] ? b : a), list[0]);
}

export function peerRows({ peers, contenders }) {
  const rows = [];
  for (const peer of peers.filter((p) => p.skipped))
    rows.push({
      group: PEERS_GROUP,
      name: `${peer.label} ${peer.version}`,
      measured: `skipped: ${peer.skipped}`,
      ratio: "",
      target: "",
      met: "",
    });
  for (const c of contenders) {
    if (c.failed || !c.result || c.result.incomplete) {
      rows.push({
        group: PEERS_GROUP,
        name: c.label,
        measured: `failed: ${c.failed ?? "incomplete"}`,
        ratio: "",
        target: "",
        met: c.kind === "rein" ? "**no**" : "",
        peers: c.kind === "rein",
      });
      continue;
    }
    const r = c.result;
    const s = r.scenarios;
    rows.push({
      group: PEERS_GROUP,
      name:
        c.kind === "peer"
          ? `${c.label} (${c.runtime})`
          : `\`${c.label}\`${c.sandboxed ? ", sandboxed shell" : ""}`,
      measured: `start → 1st request ${ms(r.firstRequestMs)}; whole run text / 1 call / 20 calls ${ms(s.text.wholeMs)} / ${ms(s.one.wholeMs)} / ${ms(s.twenty.wholeMs)}; per call ${ms(r.perCallMs)}; 1st-call penalty ${ms(r.firstCallMs)}; exit after last response ${ms(r.exitAfterMs)}; peak RSS ${mib(r.peakMiB)}`,
      ratio: "",
      target: "",
      met: "",
    });
  }
  const ok = contenders.filter((c) => c.result && !c.result.incomplete);
  const peersOk = ok.filter((c) => c.kind === "peer");
  const rein = ok.find((c) => c.kind === "rein" && c.main && c.sandboxed);
  const reinOff = ok.find((c) => c.kind === "rein" && c.main && !c.sandboxed);
  if (peersOk.length === 0 || !rein) return rows;
  const vs = (mine, theirs, key, label) => ({
    measured: `${ms(mine.result[key])} vs ${ms(theirs.result[key])} (${theirs.label})`,
    value: mine.result[key] / theirs.result[key],
    text: `${x(mine.result[key] / theirs.result[key])} ${label}`,
  });
  const fastest = best(peersOk, "firstRequestMs");
  let t = vs(rein, fastest, "firstRequestMs", "the fastest peer");
  rows.push(
    target(
      "start → 1st request, default stack (sandboxed): vs the fastest peer",
      t.measured,
      t.value,
      t.text,
      1,
    ),
  );
  const nodePeers = peersOk.filter((c) => c.runtime.startsWith("Node"));
  if (nodePeers.length > 0) {
    t = vs(rein, best(nodePeers, "firstRequestMs"), "firstRequestMs", "the fastest Node-based peer");
    rows.push(
      target(
        "start → 1st request, default stack: vs the fastest Node-based peer",
        t.measured,
        t.value,
        t.text,
        0.5,
      ),
    );
  }
  for (const c of [rein, reinOff].filter(Boolean)) {
    const penalty = c.result.firstCallMs / c.result.perCallMs;
    rows.push(
      target(
        `first-call penalty, ${c.label}: (1 call − text only) / per-call overhead`,
        `${ms(c.result.firstCallMs)} vs ${ms(c.result.perCallMs)} per call`,
        c.result.perCallMs > 0 ? penalty : Number.NaN,
        `${x(penalty)} per-call`,
        2,
      ),
    );
  }
  const plainPeers = peersOk.filter((c) => !c.sandboxed);
  if (reinOff && plainPeers.length > 0) {
    t = vs(reinOff, best(plainPeers, "perCallMs"), "perCallMs", "the best peer");
    rows.push(
      target("per-call overhead, unsandboxed: vs the best unsandboxed peer", t.measured, t.value, t.text, 1),
    );
  }
  const boxedPeers = peersOk.filter((c) => c.sandboxed);
  if (boxedPeers.length > 0) {
    t = vs(rein, best(boxedPeers, "perCallMs"), "perCallMs", "the best sandboxed peer");
    rows.push(
      target("per-call overhead, sandboxed: vs the best sandboxed peer", t.measured, t.value, t.text, 1),
    );
  }
  for (const c of [rein, reinOff].filter(Boolean)) {
    rows.push(
      target(
        `exit after the last response, ${c.label}`,
        ms(c.result.exitAfterMs),
        c.result.exitAfterMs,
        ms(c.result.exitAfterMs),
        50,
        "ms",
      ),
    );
  }
  const lightest = best(peersOk, "peakMiB");
  for (const c of ok.filter((c) => c.kind === "rein" && c.sandboxed)) {
    t = {
      measured: `${mib(c.result.peakMiB)} vs ${mib(lightest.result.peakMiB)} (${lightest.label})`,
      value: c.result.peakMiB / lightest.result.peakMiB,
    };
    rows.push(
      target(
        `peak RSS of the process tree, ${c.label}: vs the lightest peer`,
        t.measured,
        t.value,
        `${x(t.value)} the lightest peer`,
        0.8,
      ),
    );
  }
  for (const c of [rein, reinOff].filter(Boolean)) {
    const one = (k) => k.result.scenarios.one.wholeMs;
    const quickest = peersOk.reduce((a, b) => (one(b) < one(a) ? b : a));
    rows.push({
      group: PEERS_GROUP,
      name: `whole run, 1 bash call, ${c.label}: vs the quickest peer (no target)`,
      measured: `${ms(one(c))} vs ${ms(one(quickest))} (${quickest.label})`,
      ratio: `${x(one(c) / one(quickest))} the quickest peer`,
      target: "",
      met: "",
    });
  }
  return rows;
}
