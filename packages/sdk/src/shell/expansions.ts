/**
 * The parameter expansion forms (`${...}`) the analysis understands, read from the
 * expansion's text: the grammar's tree of an expansion is loose (a pattern can come
 * back as `regex`, an offset as `number`), the text is what bash reads.
 *
 * Understood (the value is decided at run time, nothing else happens):
 * `${name}`, `${#name}`, `${name[@]}`, `${name[*]}`, `${name[N]}` (N a literal),
 * `${!name*}`, `${!name@}`, `${!name[@]}`, `${!name[*]}`, and after the name
 * `:-` `-` `:+` `+` `:?` `?` (operand analysed as a word), `#` `##` `%` `%%`
 * `/` `//` `/#` `/%` `^` `^^` `,` `,,` (pattern analysed as a word),
 * `@Q` `@E` `@A` `@a` `@U` `@u` `@L` `@K` `@k`, and `:offset[:length]` with literal
 * numbers.
 *
 * Invariant: every other form is a problem (unknown): `${!name}` (the value names
 * the variable, a subscript in it runs code), `:=`/`=` (an assignment hidden in a
 * word), `@P` (prompt expansion runs substitutions), a subscript or offset that is
 * not a literal (arithmetic), and anything this table does not list.
 */
import { literalArithmetic, literalSubscript } from "./arithmetic.js";

const HEAD = /^([#!])?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!\-0_])(?:\[([^\]]*)\])?/s;
const SAFE_TRANSFORM = /^@[QEAaULuKk]$/;
const DEFAULTING = /^:?[-+?]/;
const ASSIGNING = /^:?=/;
const PATTERN = /^(?:##?|%%?|\/[/#%]?|\^\^?|,,?)/;

/** Why bash could do more than substitute a value here, or undefined for an understood form. */
export function expansionProblem(text: string): string | undefined {
  if (!text.startsWith("${") || !text.endsWith("}"))
    return `parameter expansion the analysis does not read: ${text}`;
  const body = text.slice(2, -1);
  const head = HEAD.exec(body);
  if (!head) return "parameter expansion the analysis does not understand";
  const [matched, prefix, , subscript] = head;
  const rest = body.slice(matched.length);
  if (prefix === "!") {
    const listing =
      (subscript === undefined && (rest === "*" || rest === "@")) ||
      ((subscript === "@" || subscript === "*") && rest === "");
    return listing
      ? undefined
      : "indirect expansion with ! (the value names a variable, and a subscript in it runs commands)";
  }
  if (subscript !== undefined && !literalSubscript(subscript))
    return "array subscript that is not a literal (it is evaluated as arithmetic and can run commands)";
  if (prefix === "#") return rest === "" ? undefined : "parameter expansion the analysis does not understand";
  if (rest === "" || SAFE_TRANSFORM.test(rest) || DEFAULTING.test(rest) || PATTERN.test(rest))
    return undefined;
  if (rest === "@P") return "prompt expansion with @P (it runs command substitutions in the value)";
  if (ASSIGNING.test(rest)) return "an assignment inside an expansion (:= or =)";
  if (rest.startsWith(":")) {
    return literalArithmetic(rest.slice(1))
      ? undefined
      : "substring offset that is not a literal (it is evaluated as arithmetic and can run commands)";
  }
  return "parameter expansion the analysis does not understand";
}
