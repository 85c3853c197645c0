/**
 * Attacks on the shell's OS boundary (invariant 6), each run through a real
 * sandboxed bash: the command tries, the secure outcome is checked on the host.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { releaseRuntimeIfIdle } from "../../src/index.js";
import { loopbackServer, run, tempDir, textOf } from "../helpers.js";

afterAll(() => releaseRuntimeIfIdle());

interface Place {
  root: string;
  outside: string;
  secret: string;
}

function place(): Place {
  const root = tempDir();
  const outside = tempDir();
  const secretDir = tempDir();
  const secret = join(secretDir, "id_rsa");
  writeFileSync(secret, "PRIVATE KEY MATERIAL\n");
  return { root, outside, secret };
}

const options = (p: Place) => ({ sandbox: { filesystem: { denyRead: [join(p.secret, "..")] } } });

describe("sandbox attacks: writes outside the allowed paths fail", () => {
  const attacks: { name: string; command: (p: Place) => string }[] = [
    { name: "redirect", command: (p) => `echo pwned > ${p.outside}/pwned` },
    { name: "touch", command: (p) => `touch ${p.outside}/pwned` },
    {
      name: "a script the command wrote",
      command: (p) =>
        `printf '#!/bin/bash\\necho pwned > ${p.outside}/pwned\\n' > s.sh; chmod +x s.sh; ./s.sh`,
    },
    {
      name: "python3 -c",
      command: (p) => `python3 -c "open('${p.outside}/pwned', 'w').write('pwned')"`,
    },
    { name: "a symlink inside the root", command: (p) => `ln -s ${p.outside} link; echo pwned > link/pwned` },
    { name: "a symlink to a file", command: (p) => `ln -s ${p.outside}/pwned f; echo pwned > f` },
    { name: "a background job", command: (p) => `(sleep 0.1; echo pwned > ${p.outside}/pwned) & wait` },
    { name: "setsid", command: (p) => `setsid bash -c 'echo pwned > ${p.outside}/pwned'; sleep 0.2` },
    { name: "node", command: (p) => `node -e "require('fs').writeFileSync('${p.outside}/pwned', 'x')"` },
  ];
  it.each(attacks)("$name", async ({ command }) => {
    const p = place();
    const result = await run(command(p), p.root, options(p));
    expect(existsSync(join(p.outside, "pwned")), textOf(result)).toBe(false);
    expect(result.details?.sandbox).toEqual({ mode: "workspace-write", unsandboxed: false });
  });

  it("Rein's own state in the root is not writable, the rest of the root is", async () => {
    const p = place();
    mkdirSync(join(p.root, ".rein", "sessions"), { recursive: true });
    writeFileSync(join(p.root, "rein.config.ts"), "export default {};\n");
    const result = await run(
      "echo x > ok.txt; echo forged > .rein/sessions/forged.jsonl; echo hacked >> rein.config.ts; rm -rf .rein; true",
      p.root,
      options(p),
    );
    expect(readFileSync(join(p.root, "ok.txt"), "utf8"), textOf(result)).toBe("x\n");
    expect(existsSync(join(p.root, ".rein", "sessions", "forged.jsonl"))).toBe(false);
    expect(readFileSync(join(p.root, "rein.config.ts"), "utf8")).toBe("export default {};\n");
    expect(existsSync(join(p.root, ".rein", "sessions"))).toBe(true);
  });

  it("read-only mode writes nothing in the root, only its private TMPDIR", async () => {
    const p = place();
    const result = await run("echo x > ok.txt", p.root, { sandbox: { mode: "read-only" } });
    expect(result.isError).toBe(true);
    expect(existsSync(join(p.root, "ok.txt"))).toBe(false);
    const scratch = await run('echo y > "$TMPDIR/t" && cat "$TMPDIR/t"', p.root, {
      sandbox: { mode: "read-only" },
    });
    expect(textOf(scratch)).toBe("y\n\n[exit code 0]");
  });
});

describe("sandbox attacks: reads of denied paths fail", () => {
  const attacks: { name: string; command: (p: Place) => string }[] = [
    { name: "cat", command: (p) => `cat ${p.secret}` },
    { name: "a symlink in the root", command: (p) => `ln -s ${p.secret} k; cat k` },
    { name: "python3", command: (p) => `python3 -c "print(open('${p.secret}').read())"` },
    { name: "cp into the root", command: (p) => `cp ${p.secret} copy; cat copy` },
    { name: "a hard link", command: (p) => `ln ${p.secret} h && cat h` },
    { name: "tar of the directory", command: (p) => `tar -cf - -C ${join(p.secret, "..")} . | tar -tvf -` },
  ];
  it.each(attacks)("$name", async ({ command }) => {
    const p = place();
    const result = await run(command(p), p.root, options(p));
    expect(textOf(result)).not.toContain("PRIVATE KEY MATERIAL");
    expect(existsSync(join(p.root, "copy")) ? readFileSync(join(p.root, "copy"), "utf8") : "").toBe("");
  });

  it("listing a denied directory shows nothing in it", async () => {
    const p = place();
    const result = await run(
      `ls -la ${join(p.secret, "..")}; find ${join(p.secret, "..")}`,
      p.root,
      options(p),
    );
    expect(textOf(result)).not.toContain("id_rsa");
  });
});

describe("sandbox attacks: the network is reached only through the allowlist", () => {
  it("curl and Node reach an allowed loopback server through the proxy and nothing else", async () => {
    const allowed = await loopbackServer("allowed-body");
    const other = await loopbackServer("forbidden-body");
    const p = place();
    const sandbox = { network: { allowedDomains: [`127.0.0.1:${allowed}`] } };
    // The proxy env (HTTP_PROXY) leaves loopback out by NO_PROXY, for servers inside the
    // sandbox; --noproxy '' sends a host loopback request through the proxy.
    const curlAllowed = await run(`curl -fsS --noproxy '' http://127.0.0.1:${allowed}/`, p.root, { sandbox });
    expect(textOf(curlAllowed)).toBe("allowed-body\n\n[exit code 0]");
    const nodeViaProxy = (port: number) =>
      `node -e "const u=new URL(process.env.HTTP_PROXY);require('http').get({host:u.hostname,port:u.port,path:'http://127.0.0.1:${port}/',headers:{'proxy-authorization':'Basic '+Buffer.from(decodeURIComponent(u.username)+':'+u.password).toString('base64')}},r=>{let b='';r.on('data',d=>b+=d);r.on('end',()=>console.log(r.statusCode,b))}).on('error',e=>console.log('ERR',e.code))"`;
    expect(textOf(await run(nodeViaProxy(allowed), p.root, { sandbox }))).toContain("200 allowed-body");

    const attacks = [
      `curl -fsS --noproxy '' http://127.0.0.1:${other}/`,
      `curl -fsS --max-time 3 http://127.0.0.1:${other}/`,
      "curl -fsS --max-time 3 http://example.com/",
      `node -e "fetch('http://127.0.0.1:${other}/').then(r=>r.text()).then(console.log,e=>console.log('ERR',e.cause&&e.cause.code))"`,
      `node -e "fetch('http://127.0.0.1:${allowed}/').then(r=>r.text()).then(console.log,e=>console.log('ERR',e.cause&&e.cause.code))"`,
      nodeViaProxy(other),
      `python3 -c "import urllib.request;print(urllib.request.urlopen('http://127.0.0.1:${other}/',timeout=3).read())"`,
      `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${other}; printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3; cat <&3'`,
    ];
    for (const attack of attacks) {
      const result = await run(attack, p.root, { sandbox });
      expect(textOf(result), attack).not.toContain("forbidden-body");
      // Node 20's fetch ignores HTTP_PROXY, so it reaches nothing at all (not even allowed hosts).
      if (attack.includes("fetch(")) expect(textOf(result), attack).toContain("ERR");
    }
  });

  it("a denied host stays denied even when it is also allowed", async () => {
    const port = await loopbackServer("forbidden-body");
    const p = place();
    const sandbox = { network: { allowedDomains: [`127.0.0.1:${port}`], deniedDomains: ["127.0.0.1"] } };
    const result = await run(`curl -fsS --noproxy '' http://127.0.0.1:${port}/`, p.root, { sandbox });
    expect(result.isError).toBe(true);
    expect(textOf(result)).not.toContain("forbidden-body");
  });

  it("with no allowlist (the default) nothing is reachable", async () => {
    const port = await loopbackServer("forbidden-body");
    const p = place();
    for (const attack of [
      `curl -fsS --noproxy '' http://127.0.0.1:${port}/`,
      `curl -fsS http://127.0.0.1:${port}/`,
    ]) {
      const result = await run(attack, p.root, {});
      expect(result.isError, attack).toBe(true);
      expect(textOf(result), attack).not.toContain("forbidden-body");
    }
  });
});
