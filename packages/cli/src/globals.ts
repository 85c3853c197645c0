/**
 * What every command receives from the top of the command line (`-C`, `-c`,
 * `--debug`) and the CLI's version. Its own module so commands never import
 * program.ts, which loads them (the command line sits above its commands).
 */
import { readFileSync } from "node:fs";

export interface GlobalOptions {
  cwd: string;
  config?: string | undefined;
  debug: boolean;
}

export const version = (): string =>
  (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string })
    .version;
