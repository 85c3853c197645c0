/** `rein init --skill <name>`: a skill folder that passes `rein skills validate` as written. */
import { SKILL_NAME_PATTERN } from "@rein/harness";

export const SKILL_SCAFFOLD_DIR = ".rein/skills";

export function skillScaffold(name: string): [file: string, text: string][] {
  const folder = `${SKILL_SCAFFOLD_DIR}/${name}`;
  return [
    [
      `${folder}/SKILL.md`,
      `---
name: ${name}
description: Say what this skill does and when to use it, in words a request would match. (Edit me.)
allowed-tools: read ls grep bash
---
# ${name}

Steps the agent follows once it loads this skill:

1. Read \`references/checklist.md\` (in this skill's folder) with the read tool.
2. Do the task the request asks for, one checklist item at a time.
3. Run \`scripts/check.sh\` with the shell tool to confirm the result; say what it printed.

Arguments given as \`/${name} <args>\` arrive here: $ARGUMENTS
`,
    ],
    [`${folder}/references/checklist.md`, "- The first thing to check (edit me)\n"],
    [`${folder}/scripts/check.sh`, '#!/bin/sh\necho "nothing to check yet (edit me)"\n'],
  ];
}

export const validSkillName = (name: string) => name.length <= 64 && SKILL_NAME_PATTERN.test(name);
