/** Connection strings are secrets: every form a database target is written in comes out masked. */
import { describe, expect, it } from "vitest";
import { maskConnectionStrings } from "../src/index.js";

const CASES: [string, string][] = [
  ["postgres://rein:s3cret@db.example:5432/app", "postgres://rein:***@db.example:5432/app"],
  ["postgresql://rein:s3cret@localhost/app", "postgresql://rein:***@localhost/app"],
  ["POSTGRES://rein:s3cret@host/app", "POSTGRES://rein:***@host/app"],
  ["postgres://rein:p@ss@w0rd@db:5432/app", "postgres://rein:***@db:5432/app"],
  ["postgres://rein:a/b?c#d@db/app", "postgres://rein:***@db/app"],
  ["postgres://rein:p%40ss@db/app", "postgres://rein:***@db/app"],
  ["postgres://rein:@db/app", "postgres://rein:***@db/app"],
  ["postgres://rein@db/app", "postgres://rein@db/app"],
  ["postgres://db:5432/app", "postgres://db:5432/app"],
  ["postgres://db/app?password=s3cret", "postgres://db/app?password=***"],
  [
    "postgres://db/app?sslmode=require&password=s3cret&x=1",
    "postgres://db/app?sslmode=require&password=***&x=1",
  ],
  ["postgres://db/app?PASSWORD=s3cret", "postgres://db/app?PASSWORD=***"],
  [
    "postgres://db/app?passwd=a&pwd=b&pass=c&sslpassword=d",
    "postgres://db/app?passwd=***&pwd=***&pass=***&sslpassword=***",
  ],
  ["postgres://u:x@[::1]:5432/app?password=y", "postgres://u:***@[::1]:5432/app?password=***"],
  ["postgres://u:x@%2Fvar%2Frun%2Fpostgresql/app", "postgres://u:***@%2Fvar%2Frun%2Fpostgresql/app"],
  ["postgres://u:x@h1:5432,h2:5433/app", "postgres://u:***@h1:5432,h2:5433/app"],
  // Ambiguous (an `@` in the query could end a password): masks more, never less.
  ["postgres://u:x@db/app?options=a@b", "postgres://u:***@b"],
  // A space in the password ends the URL's token: what is left after the user is masked.
  ["postgres://u:pa ss@db/app", "postgres://u:*** ss@db/app"],
  ["host=db user=rein password=s3cret dbname=app", "host=db user=rein password=*** dbname=app"],
  ["host=db password = 'with space' dbname=app", "host=db password = *** dbname=app"],
  ["sslpassword=abc", "sslpassword=***"],
  [
    'cannot connect to postgres at "postgres://u:s3cret@db/app?password=x": ECONNREFUSED',
    'cannot connect to postgres at "postgres://u:***@db/app?password=***": ECONNREFUSED',
  ],
  ["no url here", "no url here"],
  ["at postgres://db/app?password=x: refused.", "at postgres://db/app?password=***: refused."],
];

describe("maskConnectionStrings", () => {
  it.each(CASES)("%s", (input, masked) => {
    expect(maskConnectionStrings(input)).toBe(masked);
  });

  it("leaves no secret of any case in its output", () => {
    for (const [input, masked] of CASES) {
      for (const secret of ["s3cret", "p@ss@w0rd", "a/b?c#d", "p%40ss", "with space"]) {
        if (input.includes(secret)) expect(masked).not.toContain(secret);
      }
    }
  });
});
