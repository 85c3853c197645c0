/**
 * A tmux pane as a picture: `tmux capture-pane -e` (text with its SGR colour
 * escapes) turned into a standalone HTML page, and that page into a PNG through
 * headless Chromium (playwright-core, as the session-viewer test). For the
 * terminal UI's pty tests, which save what they saw.
 */
import { writeFileSync } from "node:fs";
import { chromium } from "playwright-core";

const PALETTE = [
  "#1d1f21",
  "#cc342b",
  "#198844",
  "#c99e00",
  "#3971ed",
  "#a36ac7",
  "#3971ed",
  "#c5c8c6",
  "#969896",
  "#cc342b",
  "#198844",
  "#d8865f",
  "#3971ed",
  "#a36ac7",
  "#3971ed",
  "#ffffff",
];

function color256(n: number): string {
  if (n < 16) return PALETTE[n] as string;
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `rgb(${v},${v},${v})`;
  }
  const i = n - 16;
  const level = (x: number) => (x === 0 ? 0 : 55 + x * 40);
  return `rgb(${level(Math.floor(i / 36))},${level(Math.floor(i / 6) % 6)},${level(i % 6)})`;
}

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

interface Style {
  fg?: string;
  bg?: string;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
  strike?: boolean;
  inverse?: boolean;
}

function apply(style: Style, codes: number[]): Style {
  const next = { ...style };
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i] as number;
    if (code === 0) for (const key of Object.keys(next)) delete next[key as keyof Style];
    else if (code === 1) next.bold = true;
    else if (code === 2) next.dim = true;
    else if (code === 3) next.italic = true;
    else if (code === 4) next.underline = true;
    else if (code === 7) next.inverse = true;
    else if (code === 9) next.strike = true;
    else if (code === 22) next.bold = next.dim = false;
    else if (code === 23) next.italic = false;
    else if (code === 24) next.underline = false;
    else if (code === 27) next.inverse = false;
    else if (code === 29) next.strike = false;
    else if (code >= 30 && code <= 37) next.fg = PALETTE[code - 30];
    else if (code >= 90 && code <= 97) next.fg = PALETTE[code - 90 + 8];
    else if (code === 39) delete next.fg;
    else if (code >= 40 && code <= 47) next.bg = PALETTE[code - 40];
    else if (code >= 100 && code <= 107) next.bg = PALETTE[code - 100 + 8];
    else if (code === 49) delete next.bg;
    else if (code === 38 || code === 48) {
      const key = code === 38 ? "fg" : "bg";
      if (codes[i + 1] === 5) {
        next[key] = color256(codes[i + 2] ?? 0);
        i += 2;
      } else if (codes[i + 1] === 2) {
        next[key] = `rgb(${codes[i + 2] ?? 0},${codes[i + 3] ?? 0},${codes[i + 4] ?? 0})`;
        i += 4;
      }
    }
  }
  return next;
}

function css(style: Style): string {
  const fg = style.inverse ? (style.bg ?? "#1d1f21") : style.fg;
  const bg = style.inverse ? (style.fg ?? "#c5c8c6") : style.bg;
  return [
    fg ? `color:${fg}` : "",
    bg ? `background:${bg}` : "",
    style.bold ? "font-weight:bold" : "",
    style.dim ? "opacity:.6" : "",
    style.italic ? "font-style:italic" : "",
    style.underline || style.strike
      ? `text-decoration:${[style.underline ? "underline" : "", style.strike ? "line-through" : ""].join(" ")}`
      : "",
  ]
    .filter(Boolean)
    .join(";");
}

const ESC = "\u001b";
const SGR_SPLIT = new RegExp(`(${ESC}\\[[0-9;]*m)`);
const SGR = new RegExp(`^${ESC}\\[([0-9;]*)m$`);
const OTHER_ESCAPES = new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]|${ESC}\\][^\u0007]*\u0007`, "g");

/** The captured pane (with `-e` escapes) as one standalone HTML page. */
export function screenHtml(capture: string, title: string): string {
  let style: Style = {};
  let html = "";
  // SGR sequences style the text; every other escape (cursor, OSC) is dropped.
  for (const part of capture.split(SGR_SPLIT)) {
    const sgr = part.match(SGR);
    if (sgr) {
      style = apply(style, (sgr[1] || "0").split(";").map(Number));
      continue;
    }
    const text = part.replace(OTHER_ESCAPES, "");
    if (text === "") continue;
    const rule = css(style);
    html += rule ? `<span style="${rule}">${escapeHtml(text)}</span>` : escapeHtml(text);
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{margin:0;background:#1d1f21}pre{margin:0;padding:12px 14px;color:#c5c8c6;font:14px/1.3 "DejaVu Sans Mono",monospace;white-space:pre}</style>
</head><body><pre>${html}</pre></body></html>
`;
}

/** Writes `<base>.html` and `<base>.png` (Chromium at CHROMIUM_PATH or /usr/bin/chromium). */
export async function saveScreen(capture: string, base: string, title: string): Promise<void> {
  const html = screenHtml(capture, title);
  writeFileSync(`${base}.html`, html);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    await page.setContent(html);
    await page.screenshot({ path: `${base}.png`, fullPage: true });
  } finally {
    await browser.close();
  }
}
