// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the generator writes bash text, not templates
/**
 * Scripts composed from bash's grammar, seeded and reproducible, for the differential
 * oracle (security invariant 1).
 *
 * Every compound command, every expansion form, quoting, here-docs, arithmetic,
 * arrays, traps, aliases and the builtins that evaluate strings or names are drawn
 * from the tables below. Hidden code is always `touch h<n>` tucked where bash will
 * (or might) evaluate it: in a variable's value used as arithmetic or a name, in a
 * trap, an alias, an eval or sourced string, a prompt, a completion word list.
 *
 * Invariant: a script is a tree of `Part`s; `render` gives its text and `shrink`
 * gives smaller candidate trees, so a divergence can be printed as a minimal script.
 * Scripts end quickly (loops are bounded, standard input is /dev/null).
 */

import { EVALUATING_FORMS, evaluatingForms, TRICKY_FORMS, trickyForms } from "./forms.js";

/** A piece of script: its text from its children, and the children a shrink may keep alone. */
export interface Part {
  text: (kids: readonly string[]) => string;
  kids: Part[];
  /** Category of the part: a shrink replaces a part only by a kid of the same category. */
  kind: "stmt" | "word" | "arith";
}

export function render(part: Part): string {
  return part.text(part.kids.map(render));
}

/** Smaller trees: each kid of the same kind in place of its parent, or each kid shrunk. */
export function* shrink(part: Part): Generator<Part> {
  for (const kid of part.kids) if (kid.kind === part.kind) yield kid;
  for (let i = 0; i < part.kids.length; i++) {
    for (const smaller of shrink(part.kids[i] as Part)) {
      const kids = [...part.kids];
      kids[i] = smaller;
      yield { ...part, kids };
    }
  }
}

/** mulberry32: small, fast, seeded. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const leaf = (kind: Part["kind"], text: string): Part => ({ kind, kids: [], text: () => text });
const node = (kind: Part["kind"], kids: Part[], text: (k: readonly string[]) => string): Part => ({
  kind,
  kids,
  text,
});

/** Inside backticks, `\\`, `` ` `` and `$` need a backslash to stay themselves. */
const escapeBackticks = (text: string) => text.replace(/[`\\$]/g, "\\$&");

const sq = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

/** The grammar: each production draws from the generator's random source. */
export class ScriptGenerator {
  private n = 0;
  private readonly rnd: () => number;

  constructor(seed: number) {
    this.rnd = random(seed);
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rnd() * items.length)] as T;
  }

  private id(): number {
    return this.n++;
  }

  /** Code hidden in a string: what bash runs only if it evaluates the string. */
  private hidden(): string {
    return `touch h${this.id()}`;
  }

  /** A value that runs hidden code when bash evaluates it as arithmetic or a name. */
  private payload(): string {
    return this.pick([`a[$(${this.hidden()})]`, `a[\`${this.hidden()}\`]`, "1", "x", "0", "a[1]"]);
  }

  /** One whole script: a few statements, some defining variables first. */
  script(): Part {
    this.n = 0;
    const count = 1 + Math.floor(this.rnd() * 3);
    const kids: Part[] = [];
    for (let i = 0; i < count; i++) kids.push(this.rnd() < 0.35 ? this.definition() : this.stmt(3));
    const sep = this.pick(["; ", "\n", " && ", " || "]);
    return node("stmt", kids, (k) => k.join(sep));
  }

  /** Gives a variable a value, perhaps hidden code, the ways bash can. */
  private definition(): Part {
    const v = sq(this.payload());
    const name = this.pick(["x", "y", "HOME_X"]);
    return leaf(
      "stmt",
      this.pick([
        `${name}=${v}`,
        `declare ${name}=${v}`,
        `export ${name}=${v}`,
        `read -r ${name} <<< ${v}`,
        `printf -v ${name} %s ${v}`,
        `a=(${v} 2)`,
        `declare -A m=([k]=${v})`,
        `mapfile -t arr <<< ${v}`,
        `set -- ${v}`,
      ]),
    );
  }

  stmt(depth: number): Part {
    if (depth <= 0) return this.simple(0);
    const d = depth - 1;
    const s = () => this.stmt(d);
    const w = () => this.word(d);
    const p = <T>(items: readonly T[]) => this.pick(items);
    const choice = Math.floor(this.rnd() * 38);
    switch (choice) {
      case 34:
      case 35:
        return this.tricky(d);
      case 36: {
        const form = p([0, 1, 2, 3, 4, 5]);
        return node(
          "stmt",
          [w(), s(), s()],
          (k) =>
            [
              `case ${k[0]} in (a|${k[0]}) ${k[1]} ;& b) ${k[2]} ;; esac`,
              `case ${k[0]} in *) ${k[1]} ;;& a) ${k[2]} ;; esac`,
              `case $(${k[1]}) in *) ${k[2]} ;; esac`,
              `case a in $(${k[1]})) ${k[2]} ;; esac`,
              `case ${k[0]} in\n  a) ${k[1]}\n  ;;\n  *) ${k[2]}\nesac`,
              `case ${k[0]} in a) ;; esac; ${k[1]}`,
            ][form] as string,
        );
      }
      case 37: {
        const form = p([0, 1, 2, 3]);
        return node(
          "stmt",
          [s(), s()],
          (k) =>
            [
              `function f() { ${k[0]}; }; f; ${k[1]}`,
              `f ( ) { ${k[0]}; } > o1; f`,
              `f() { local y=1; ${k[0]}; }; f & wait; ${k[1]}`,
              `f() if true; then ${k[0]}; fi; f`,
            ][form] as string,
        );
      }
      case 0:
      case 1:
      case 2:
      case 3:
        return this.simple(d);
      case 4: {
        const op = p(["&&", "||", ";", "&"]);
        return node("stmt", [s(), s()], (k) => `${k[0]} ${op} ${k[1]}`);
      }
      case 5: {
        const op = p(["|", "|&"]);
        return node("stmt", [s(), s()], (k) => `${k[0]} ${op} ${k[1]}`);
      }
      case 6:
        return node("stmt", [s()], (k) => `( ${k[0]} )`);
      case 7:
        return node("stmt", [s()], (k) => `{ ${k[0]}; }`);
      case 8:
        return node("stmt", [s(), s(), s()], (k) => `if ${k[0]}; then ${k[1]}; else ${k[2]}; fi`);
      case 9:
        return node("stmt", [s(), s()], (k) => `if false; then :; elif ${k[0]}; then ${k[1]}; fi`);
      case 10:
        return node("stmt", [s()], (k) => `w=1; while [ -n "$w" ]; do w=; ${k[0]}; done`);
      case 11:
        return node("stmt", [s()], (k) => `u=1; until [ -z "$u" ]; do u=; ${k[0]}; done`);
      case 12: {
        const v = p(["x", "y", "v", "HOME"]);
        return node("stmt", [w(), w(), s()], (k) => `for ${v} in ${k[0]} ${k[1]}; do ${k[2]}; done`);
      }
      case 13:
        return node(
          "stmt",
          [s(), this.arith(d)],
          (k) => `for ((i=0; i<${k[1]} && i<2; i++)); do ${k[0]}; done`,
        );
      case 14:
        return node(
          "stmt",
          [w(), w(), s(), s()],
          (k) => `case ${k[0]} in ${k[1]}) ${k[2]};; *) ${k[3]};; esac`,
        );
      case 15: {
        const form = p([0, 1, 2]);
        return node("stmt", [s()], (k) =>
          form === 0
            ? `f() { ${k[0]}; }; f`
            : form === 1
              ? `function f { ${k[0]}; }; f`
              : `f() ( ${k[0]} ); f`,
        );
      }
      case 16:
        return node("stmt", [s()], (k) => `! ${k[0]}`);
      case 17:
        return node("stmt", [s()], (k) => `time ${k[0]}`);
      case 18: {
        const form = p([0, 1, 2]);
        return node("stmt", [s()], (k) =>
          form === 0 ? `coproc { ${k[0]}; }` : form === 1 ? `coproc c { ${k[0]}; }` : `coproc ${k[0]}`,
        );
      }
      case 19: {
        const op = p([">", ">>", "2>", "&>", ">|"]);
        const target = p([0, 1, 2]);
        return node(
          "stmt",
          [s(), w()],
          (k) => `${k[0]} ${op} ${target === 0 ? "o1" : target === 1 ? "o2" : k[1]}`,
        );
      }
      case 20: {
        const form = p([0, 1, 2, 3, 4]);
        const hidden = this.hidden();
        return node(
          "stmt",
          [w()],
          (k) =>
            [
              `cat <<EOF\n${k[0]} $(${hidden})\nEOF`,
              `cat <<'EOF'\n${k[0]} $(${hidden})\nEOF`,
              `cat <<-EOF\n\t${k[0]}\n\tEOF`,
              `cat <<EOF | cat\n${k[0]}\nEOF`,
              `cat <<< ${k[0]}`,
            ][form] as string,
        );
      }
      case 21:
        return node("stmt", [this.arith(d)], (k) => `(( ${k[0]} ))`);
      case 22: {
        const form = p([0, 1, 2, 3, 4, 5]);
        return node(
          "stmt",
          [w(), w()],
          (k) =>
            [
              `[[ ${k[0]} == ${k[1]} ]]`,
              `[[ ${k[0]} -eq ${k[1]} ]]`,
              `[[ -v ${k[0]} ]]`,
              `[ ${k[0]} = ${k[1]} ]`,
              `test -v ${k[0]}`,
              `[[ ${k[0]} =~ a ]]`,
            ][form] as string,
        );
      }
      case 23: {
        const signal = p(["EXIT", "ERR", "DEBUG", "RETURN"]);
        return node("stmt", [s()], (k) => `trap ${sq(k[0] as string)} ${signal}`);
      }
      case 24:
        return leaf("stmt", `trap ${p(['"$x"', "'eval \"$x\"'"])} EXIT`);
      case 25:
        return node("stmt", [s()], (k) => `eval ${sq(k[0] as string)}`);
      case 26: {
        const shell = p(["bash -c", "sh -c", "env bash -c", "command bash -c"]);
        return node("stmt", [s()], (k) => `${shell} ${sq(k[0] as string)}`);
      }
      case 27:
        return node("stmt", [s()], (k) => `shopt -s expand_aliases; alias e=${sq(k[0] as string)}\ne`);
      case 28: {
        const source = p(["source", "."]);
        return node("stmt", [s()], (k) => `printf '%s\\n' ${sq(k[0] as string)} > s.sh; ${source} ./s.sh`);
      }
      case 29:
        return this.evaluating(d);
      case 30: {
        const v = p(["x", "y"]);
        return node("stmt", [w(), s()], (k) => `select ${v} in ${k[0]}; do ${k[1]}; break; done`);
      }
      case 31: {
        const form = p([0, 1, 2]);
        return node("stmt", [s()], (k) =>
          form === 0
            ? `x=$(${k[0]})`
            : form === 1
              ? `x=\`${escapeBackticks(k[0] as string)}\` y=2`
              : `L=1 ${k[0]}`,
        );
      }
      case 32: {
        const wrapper = p(["xargs", "xargs -I{}", "env", "command", "nice", "timeout 5", "nohup", "exec"]);
        return node("stmt", [this.simple(d)], (k) =>
          wrapper === "exec" ? `( exec ${k[0]} )` : `${wrapper} ${k[0]}`,
        );
      }
      default: {
        const op = p([" ", " && "]);
        return node("stmt", [w(), s()], (k) => `echo ${k[0]}${op}${k[1]}`);
      }
    }
  }

  /** Forms where parsers and bash are known to part ways: comments, continuations, here-docs, fds, quoting. */
  private tricky(d: number): Part {
    const form = Math.floor(this.rnd() * TRICKY_FORMS);
    const h = this.hidden();
    const v = `touch v${this.id()}`;
    return node("stmt", [this.stmt(d)], (k) => trickyForms(k[0] as string, h, v)[form] as string);
  }

  /** Builtins that evaluate their arguments as arithmetic, names, prompts or code. */
  private evaluating(d: number): Part {
    const form = Math.floor(this.rnd() * EVALUATING_FORMS);
    const hidden = this.hidden();
    return node("stmt", [this.word(d)], (k) => evaluatingForms(k[0] as string, hidden)[form] as string);
  }

  /** A simple command: a visible program or builtin, arguments, sometimes a prefix. */
  simple(depth: number): Part {
    const args = [this.word(depth)];
    if (this.rnd() < 0.4) args.push(this.word(depth));
    const program = this.pick([
      `touch v${this.id()}`,
      `mkdir -p d${this.id()}`,
      "rm -f nothing",
      "cat /dev/null",
      "ls -d .",
      "wc -c /dev/null",
      "echo",
      "printf '%s\\n'",
      "true",
      ":",
      `/usr/bin/touch p${this.id()}`,
      `t\\ouch q${this.id()}`,
      `$'\\x74ouch' e${this.id()}`,
      `"touch" s${this.id()}`,
      `to''uch k${this.id()}`,
    ]);
    const prefix = this.pick(["", "", "", "A=1 ", `X=${sq(this.payload())} `, "2>/dev/null "]);
    return node("stmt", args, (k) => `${prefix}${program} ${k.join(" ")}`);
  }

  word(depth: number): Part {
    const d = Math.max(0, depth - 1);
    const choice = Math.floor(this.rnd() * (depth > 0 ? 30 : 14));
    switch (choice) {
      case 0:
      case 1:
        return leaf("word", this.pick(["a", "1", "0", "x", "word", "-n"]));
      case 2:
        return leaf(
          "word",
          this.pick(['"a b"', "'a b'", "a\\ b", "$'a\\tb'", '$"a"', "~", "*", "{a,b}", "{1..2}"]),
        );
      case 3:
        return leaf("word", this.pick(["$x", '"$x"', "$y", "${x}", "$1", "$#", "$?", '"$@"', "$HOME_X"]));
      case 4:
        return leaf(
          "word",
          this.pick([
            "${x:-d}",
            "${x#a}",
            "${x%]}",
            "${x/a/b}",
            "${#x}",
            "${x^^}",
            "${x@Q}",
            "${a[@]}",
            "${a[1]}",
            "${!a[@]}",
            "${!H*}",
          ]),
        );
      case 5:
        return leaf(
          "word",
          this.pick([
            "${x@P}",
            "${!x}",
            "${a[x]}",
            "${a[$x]}",
            "${y:x}",
            "${y:1:x}",
            "${x:=1}",
            "${z=$x}",
            "${a[@]:x}",
          ]),
        );
      case 6:
        return leaf(
          "word",
          this.pick(["$((x))", "$((x+1))", "$[x]", "$(($x))", "$((a[x]))", "$((1+2))", "$[3]", "$((y=x))"]),
        );
      case 7:
        return leaf("word", `"$(( ${this.pick(["x", "1", "$x", "a[$x]"])} ))"`);
      case 8:
        return leaf("word", this.pick(["?", "[ab]", "@(a|b)", "!(x)", "a*"]));
      case 9:
      case 10:
      case 11:
      case 12:
      case 13:
        return leaf("word", this.pick(["a", "b", "1", '"q"', "'r'"]));
      case 14:
      case 15:
        return node("word", [this.stmt(d)], (k) => `$(${k[0]})`);
      case 16:
        return node("word", [this.stmt(d)], (k) => `"$(${k[0]})"`);
      case 17:
        return node("word", [this.stmt(d)], (k) => `\`${escapeBackticks(k[0] as string)}\``);
      case 18:
        return node("word", [this.stmt(d)], (k) => `<(${k[0]})`);
      case 19:
        return node("word", [this.stmt(d)], (k) => `\${x:-$(${k[0]})}`);
      case 20:
        return node("word", [this.arith(d)], (k) => `$((${k[0]}))`);
      case 21:
        return node("word", [this.arith(d)], (k) => `$[${k[0]}]`);
      case 22:
        return node("word", [this.word(d), this.word(d)], (k) => `${k[0]}${k[1]}`);
      case 23:
        return node("word", [this.arith(d)], (k) => `\${y:${k[0]}}`);
      case 24:
        return node("word", [this.arith(d)], (k) => `\${a[${k[0]}]}`);
      case 25:
        return node("word", [this.stmt(d)], (k) => `"\${x:+$(${k[0]})}"`);
      case 26:
        return leaf("word", sq(this.payload()));
      case 27:
        return leaf("word", `"${this.payload()}"`);
      default:
        return node("word", [this.stmt(d)], (k) => `"a$(${k[0]})b"`);
    }
  }

  arith(depth: number): Part {
    const choice = Math.floor(this.rnd() * (depth > 0 ? 12 : 6));
    const d = Math.max(0, depth - 1);
    switch (choice) {
      case 0:
        return leaf("arith", this.pick(["1", "0", "2", "0x1"]));
      case 1:
        return leaf("arith", this.pick(["x", "y", "a[x]", "a[1]", "$x", "z"]));
      case 2:
        return leaf("arith", this.pick(["$#", "$?", "i", "x++", "y+=1", "x=1"]));
      case 3:
        return leaf("arith", `a[$(${this.hidden()})]`);
      case 4:
        return leaf("arith", `"${this.pick(["x", "1", "$x"])}"`);
      case 5:
        return leaf("arith", this.pick(["1+1", "2*3", "1?2:3", "(1)"]));
      case 6:
      case 7: {
        const op = this.pick(["+", "-", "*", "<", "==", "&&", ","]);
        return node("arith", [this.arith(d), this.arith(d)], (k) => `${k[0]}${op}${k[1]}`);
      }
      case 8:
        return node("arith", [this.arith(d)], (k) => `(${k[0]})`);
      case 9:
        return node("arith", [this.stmt(d)], (k) => `$(${k[0]})`);
      case 10:
        return node("arith", [this.arith(d), this.arith(d), this.arith(d)], (k) => `${k[0]}?${k[1]}:${k[2]}`);
      default:
        return node("arith", [this.word(d)], (k) => `${k[0]}`);
    }
  }
}
