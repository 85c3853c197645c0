/**
 * Peak RSS of a process tree (Linux /proc): every `interval` ms the sampler finds
 * the root's descendants (a pid's parent is read once, when the pid first shows up)
 * and sums their resident sets; each process's own high-water mark (`VmHWM`) is
 * read as well, so a one-process spike between two samples still counts. The
 * peak is the larger of the largest sum and the largest single high-water mark.
 */
import fs from "node:fs";

function parentOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: fields start after the last ")".
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** `{ rssKiB, hwmKiB }` of one process, or undefined once it is gone (or a zombie). */
function memoryOf(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const rss = /VmRSS:\s+(\d+)/.exec(status);
    const hwm = /VmHWM:\s+(\d+)/.exec(status);
    return rss ? { rssKiB: Number(rss[1]), hwmKiB: hwm ? Number(hwm[1]) : 0 } : undefined;
  } catch {
    return undefined;
  }
}

/** Starts sampling the tree under `root`; `stop()` returns its peak in MiB (NaN where /proc is missing). */
export function sampleTree(root, { interval = 10 } = {}) {
  if (!fs.existsSync("/proc/self/status")) return { stop: () => Number.NaN };
  const parents = new Map();
  const tree = new Set([root]);
  let peakKiB = 0;
  const sample = () => {
    let names;
    try {
      names = fs.readdirSync("/proc");
    } catch {
      return;
    }
    const live = new Set();
    for (const name of names) {
      const pid = Number(name);
      if (!Number.isInteger(pid)) continue;
      live.add(pid);
      if (!parents.has(pid)) parents.set(pid, parentOf(pid));
    }
    for (const pid of parents.keys()) if (!live.has(pid)) parents.delete(pid);
    // Parents first is not guaranteed by pid order: repeat until nothing joins.
    for (let grew = true; grew; ) {
      grew = false;
      for (const [pid, parent] of parents)
        if (!tree.has(pid) && tree.has(parent)) {
          tree.add(pid);
          grew = true;
        }
    }
    let sum = 0;
    for (const pid of tree) {
      const memory = memoryOf(pid);
      if (!memory) continue;
      sum += memory.rssKiB;
      peakKiB = Math.max(peakKiB, memory.hwmKiB);
    }
    peakKiB = Math.max(peakKiB, sum);
  };
  sample();
  const timer = setInterval(sample, interval);
  return {
    /** Call on the root's `exit` (before it is reaped the last sample still sees it). */
    sample,
    stop() {
      clearInterval(timer);
      return peakKiB / 1024;
    },
  };
}
