/**
 * `rein doctor`'s Node check: Rein needs Node >= 22.19 (pi-ai's floor), and a release
 * line past its end of life gets a warning (it still runs, but gets no security fixes).
 * End-of-life dates are the Node.js release schedule's; a line newer than the table is
 * taken as supported.
 */

/** Last day of support per release line (Node.js release schedule). */
const END_OF_LIFE: Readonly<Record<number, string>> = {
  18: "2025-04-30",
  19: "2023-06-01",
  20: "2026-04-30",
  21: "2024-06-01",
  22: "2027-04-30",
  23: "2025-06-01",
  24: "2028-04-30",
  25: "2026-06-01",
  26: "2029-04-30",
  27: "2027-06-01",
};

export const MINIMUM_NODE = "22.19.0";

export interface NodeCheck {
  ok: boolean;
  /** Set when the line is past its end of life (or the version is below Rein's floor). */
  warning?: string;
  detail: string;
}

export function nodeCheck(version: string = process.versions.node, today: Date = new Date()): NodeCheck {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const detail = `v${version}`;
  if (major < 22 || (major === 22 && minor < 19)) {
    return {
      ok: false,
      detail,
      warning: `Rein needs Node.js ${MINIMUM_NODE} or newer (Node 24 LTS is recommended)`,
    };
  }
  const eol = END_OF_LIFE[major];
  if (eol !== undefined && today.toISOString().slice(0, 10) > eol) {
    return {
      ok: true,
      detail,
      warning: `Node ${major} reached its end of life on ${eol}; move to a supported line (24 LTS)`,
    };
  }
  return { ok: true, detail };
}
