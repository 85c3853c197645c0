/**
 * Where bash reads text as arithmetic or as a variable name, and when that text is
 * safe to call understood.
 *
 * bash evaluates arithmetic recursively: in `((x))` the value of `x` is itself an
 * expression, and `a[$(cmd)]` inside that value runs `cmd`. A variable name handed to
 * `printf -v`, `read`, `test -v`, `declare -n` ... is parsed the same way when it holds
 * a subscript. So nothing short of a literal is understood here.
 *
 * Invariant: `literalArithmetic` accepts only numbers, operators and the special
 * parameters that always expand to a number (`$#`, `$?`, `$$`, `$!`); `plainName`
 * accepts only an identifier without subscript. Everything else is `unknown`.
 */

/** Special parameters whose value is always a decimal number. */
const NUMERIC_PARAMETER = /\$(?:[#?$!]|\{[#?$!]\})/g;
const HEX = /\b0[xX][0-9a-fA-F]+\b/g;
const ARITHMETIC_LITERAL = /^[0-9\s+\-*/%()<>=!&|^~?:,]*$/;

/** Arithmetic text with no variable, substitution, subscript or quoted part: its value is fixed. */
export function literalArithmetic(text: string): boolean {
  return ARITHMETIC_LITERAL.test(text.replace(NUMERIC_PARAMETER, "0").replace(HEX, "0"));
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A variable name bash takes as it is: no subscript (which would be evaluated), nothing expanded. */
export function plainName(text: string): boolean {
  return NAME.test(text);
}

/** `NAME`, `NAME=value` or `NAME+=value` with a plain name, as `declare`/`export`/`local` take it. */
export function plainDeclaration(text: string): boolean {
  const name = /^([^=+]*)(?:\+?=|$)/s.exec(text)?.[1] ?? "";
  return plainName(name);
}

/** A subscript bash does not evaluate as arithmetic, or a literal index: `@`, `*`, `3`, `-1`. */
export function literalSubscript(text: string): boolean {
  return text === "@" || text === "*" || /^\s*-?\d+\s*$/.test(text);
}

export const ARITHMETIC_REASON =
  "arithmetic on something other than literals (a variable's value can run commands)";
export const NAME_REASON =
  "a variable name that is not a plain literal identifier (a subscript in it is evaluated and can run commands)";
