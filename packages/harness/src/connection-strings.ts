/**
 * Connection strings are secrets: the one function that masks them in any text
 * before it is printed or logged (errors, logs, `rein config`, `rein doctor`, the
 * worker's ready line). Here because both the PostgreSQL store and the CLI print
 * database targets, and both build on the harness.
 *
 * Masked: the password of a `postgres://` / `postgresql://` URL's userinfo (which may
 * hold `@`, `:`, `/`, `?`, `#` unencoded: the userinfo ends at the last `@` before a
 * plausible host, so an `@` in the query masks too much, never too little; a URL cut short by a space or quote inside its password, with no
 * such `@` left, is masked from the user's `:` on), secret query parameters
 * (`password`, `passwd`, `pass`, `pwd`, `sslpassword`), and `password=` pairs of a
 * libpq key/value string (`host=... password='x y'`). The user, host, port and
 * database stay: they say which store is meant.
 */

const MASK = "***";

/** Query parameters whose value is a secret (case-insensitive). */
const SECRET_PARAMS = /^(?:password|passwd|pass|pwd|sslpassword)$/i;

/** A URL from its scheme to the next whitespace or quote. */
const URL_PATTERN = /\bpostgres(?:ql)?:\/\/[^\s"'`<>]*/gi;

/** `password = value` in a libpq key/value string; the value is quoted or runs to a space. */
const PAIR_PATTERN = /\b((?:ssl)?password)(\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s'"]+)/gi;

/** What may follow the userinfo's `@`: a host (name, IPv4, [IPv6], %-encoded socket path), port, then the rest. */
const HOST_START = /^(?:\[[0-9a-f:.%\w]*\]|[\w.%-]*)(?::\d*)?(?:[/?#,]|$)/i;

export function maskConnectionStrings(text: string): string {
  let out = "";
  let from = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    // Punctuation after a URL in a sentence ("...at postgres://h/db: refused") is not part of it.
    const url = match[0].replace(/[:.,;)\]]+$/, "");
    out += maskPairs(text.slice(from, match.index)) + maskUrl(url);
    from = match.index + url.length;
  }
  return out + maskPairs(text.slice(from));
}

/** Key/value pairs outside URLs (inside one, `password=` is a query parameter). */
const maskPairs = (text: string) => text.replace(PAIR_PATTERN, (_, key, eq) => `${key}${eq}${MASK}`);

function maskUrl(url: string): string {
  const scheme = url.slice(0, url.indexOf("//") + 2);
  let rest = url.slice(scheme.length);
  // The userinfo ends at the last `@` that a host can follow (a password may hold `@`).
  let at = rest.lastIndexOf("@");
  while (at >= 0 && !HOST_START.test(rest.slice(at + 1))) at = rest.lastIndexOf("@", at - 1);
  let userinfo = "";
  if (at >= 0) {
    const info = rest.slice(0, at);
    const colon = info.indexOf(":");
    userinfo = `${colon >= 0 ? `${info.slice(0, colon)}:${MASK}` : info}@`;
    rest = rest.slice(at + 1);
  } else {
    // No host after any `@`: `user:secret` cut short (a space in the password), unless the colon is a port's.
    const cut = /^([^:/?#@]*):(?!\d*(?:[/?#,]|$))/.exec(rest);
    if (cut) return `${scheme}${cut[1]}:${MASK}`;
  }
  const query = rest.indexOf("?");
  if (query >= 0) {
    const [search, hash = ""] = rest.slice(query + 1).split(/#(.*)/s);
    const masked = (search ?? "")
      .split("&")
      .map((pair) => {
        const eq = pair.indexOf("=");
        const name = eq >= 0 ? pair.slice(0, eq) : pair;
        return eq >= 0 && SECRET_PARAMS.test(safeDecode(name)) ? `${name}=${MASK}` : pair;
      })
      .join("&");
    rest = `${rest.slice(0, query)}?${masked}${hash ? `#${hash}` : ""}`;
  }
  return `${scheme}${userinfo}${rest}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
