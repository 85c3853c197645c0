/**
 * What the shell analysis tells about one command line (`ToolCallFacts.command`).
 *
 * Invariant: type-only. Importing this module costs nothing at run time; the parser
 * itself lives behind the `@rein/sdk/shell` entry.
 */

/** One redirection: the operator as written (`>`, `2>&1` is `>&` with target `1`, `<<`, `<<<`) and its unquoted target. */
export interface ShellRedirection {
  op: string;
  target: string;
}

/** One simple command, anywhere in the tree (a list, pipeline, subshell, substitution, function body, loop, case arm, `bash -c` string). */
export interface SimpleCommandFacts {
  /** Words with quotes and escapes removed, wrappers unwrapped; argv[0] is a bare name (`/usr/bin/git` gives `git`). */
  argv: string[];
  /** `NAME=value` prefixes (and `env NAME=value`, `export NAME=value`), unquoted. */
  assignments: string[];
  redirections: ShellRedirection[];
  /** Wrappers unwrapped to reach argv, outermost first, e.g. `["sudo", "env"]`. */
  wrappers: string[];
  /** The words as written, quotes removed, before unwrapping (for a `bash -c` string: the outer command's words). */
  original: string[];
  /**
   * True when running `argv` is what the original words run: only transparent wrappers
   * (`command`, `exec`, `nohup`, `time`, `nice`, `timeout`, `stdbuf`, `env` without `-S`,
   * `bash -c`, `eval`) and argv[0] a bare name or a path in a system bin directory.
   * `sudo`, `./git`, `~/bin/git` are not direct: only the original words describe them.
   */
  direct: boolean;
  /** Indices in argv whose value is decided at run time (variables, substitutions, globs, braces). */
  expanded: number[];
  /** More arguments are appended at run time (`xargs`). */
  openArgs: boolean;
  /** argv with git's global options removed (`git -C dir push` gives `git push`); equal to argv otherwise. */
  normalized: string[];
  /** Where the command sits, outermost first: `pipeline`, `list`, `subshell`, `group`, `substitution`, `process-substitution`, `function`, `loop`, `if`, `case`, `shell-string`, `find-exec`, `xargs`. */
  context: string[];
}

/** Something the analysis could not resolve statically. */
export interface ShellUnknown {
  reason: string;
  text: string;
}

export interface ShellCommandFacts {
  source: string;
  /** Every simple command anywhere in the tree, in source order. */
  commands: SimpleCommandFacts[];
  /** What could not be resolved statically; `[]` means fully understood. */
  unknown: ShellUnknown[];
}

declare module "@rein/harness" {
  interface ToolCallFacts {
    /** The parsed shell command of a shell tool (see `@rein/sdk/shell`). */
    command?: ShellCommandFacts;
  }
}
