const { analyzeShell, loadShellParser } = await import("../dist/shell/index.js");
const { Parser, Language } = await import("web-tree-sitter");
await loadShellParser();
const commands = ["git status && npm run test -- -u", "echo hi; rm -rf x", "ls *.ts | xargs -n1 wc -l", "bash -c 'git push origin main'", "for f in *.md; do echo \"$f\"; done", "cd packages/app && npm ci && npm run build 2>&1 | tail -20"];
for (let i = 0; i < 300; i++) await analyzeShell(commands[i % commands.length]);
const N = 3000; let t = performance.now();
for (let i = 0; i < N; i++) await analyzeShell(commands[i % commands.length]);
console.log("analyze us", ((performance.now() - t) / N) * 1000);
// raw parse only
await Parser.init();
const { createRequire } = await import("node:module");
const lang = await Language.load(createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
const p = new Parser(); p.setLanguage(lang);
t = performance.now();
for (let i = 0; i < N; i++) p.parse(commands[i % commands.length]).delete();
console.log("parse-only us", ((performance.now() - t) / N) * 1000);
