const { analyzeShell, loadShellParser } = await import("../dist/shell/index.js");
await loadShellParser();
const commands = ["git status && npm run test -- -u", "echo hi; rm -rf x", "ls *.ts | xargs -n1 wc -l", "bash -c 'git push origin main'", "for f in *.md; do echo \"$f\"; done", "cd packages/app && npm ci && npm run build 2>&1 | tail -20"];
for (const c of commands) {
  for (let i = 0; i < 200; i++) await analyzeShell(c);
  const N = 1000; const t = performance.now();
  for (let i = 0; i < N; i++) await analyzeShell(c);
  console.log(((performance.now() - t) / N * 1000).toFixed(0), "us", c);
}
