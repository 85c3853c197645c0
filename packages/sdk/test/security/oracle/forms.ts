// biome-ignore-all lint/suspicious/noTemplateCurlyInString: bash text, not templates
/**
 * The generator's tables of whole forms: builtins that evaluate their arguments, and
 * forms where parsers and bash are known to part ways (comments, continuations,
 * here-docs, descriptors, quoting inside expansions, `case` inside substitutions).
 * `k` is a generated part (a statement or word), `h` hidden code (it runs only if
 * bash evaluates a string), `v` a visible command.
 */

const sq = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;
const escapeSingle = (text: string) => text.replace(/'/g, "'\\''");

export function evaluatingForms(k: string, hidden: string): string[] {
  return [
    `let ${k}`,
    `let "y=${k}"`,
    `declare -i z=${k}`,
    `declare -i z; z=${k}`,
    `declare -n r=${k}; echo "$r"`,
    `printf -v ${k} %s 1`,
    `read ${k} <<< 1`,
    `unset ${k}`,
    `echo "\${x@P}"`,
    `PS4=${sq(`$(${hidden})`)}; set -x; :`,
    `compgen -W ${sq(`$(${hidden})`)} a`,
    `mapfile -C ${sq(hidden)} -c 1 <<< ${k}`,
    `getopts a ${k}`,
    `wait -p ${k} -n 2>/dev/null`,
    `echo "\${!x}"`,
    `echo "\${a[${k}]}"`,
    `echo "\${y:${k}}"`,
    `shift ${k}`,
    `eval "$x"`,
    `$x`,
  ];
}

export const EVALUATING_FORMS = 20;

export function trickyForms(k: string, h: string, v: string): string[] {
  return [
    `echo a#$(${h})`,
    `echo a # $(${h})`,
    `echo a #; ${h}`,
    `echo "\\$(${h})" '$(${h})' \\$\\(${h}\\)`,
    `echo a\\\n$(${v})`,
    `ec\\\nho a; ${k}`,
    `echo "a\\\n$(${v})"`,
    `cat <<"EOF"\n$(${h})\nEOF\n${k}`,
    `cat <<\\EOF\n$(${h})\nEOF\n${k}`,
    `cat <<EOF\n\\$(${h}) $(${v})\nEOF\n${k}`,
    `cat <<A <<B\n$(${v})\nA\n$(${v})\nB\n${k}`,
    `x=$(cat <<EOF\n$(${v})\nEOF\n); ${k}`,
    `cat <<EOF\nline \\\n$(${v})\nEOF`,
    `cat <<EOF\n\${x:-$(${v})}\nEOF`,
    `cat <<EOF\n$[1+1] $((2))\nEOF`,
    `exec 3>o1; ${k} >&3`,
    `{fd}>o2 ${k}`,
    `${k} {fd}>o2`,
    `${k} <> o1`,
    `${k} &>> o2`,
    `${k} 2>&1 >o1`,
    `a+=(1); a[1]+=2; echo "\${a[-1]}" "\${a[@]:1:1}"; ${k}`,
    `[[ ( -n a ) && ! -z "$(${v})" || a == b* ]]`,
    `echo if then fi done; ${k}`,
    `a=b c=$(${v}) ${k}`,
    `eval 'x=1; ((x))'; ${k}`,
    `bash -c '${escapeSingle(k)}; $0' true`,
    `trap - EXIT; trap '' INT; ${k}`,
    `echo $"t" $'\\'' $'\\x27$(${h})'`,
    `echo ~/x ~root; ${k}`,
    `${k} & wait`,
    `echo \\"$(${v})\\"`,
    `echo '\\'' "$(${v})"`,
    `time -p ${k}`,
    `echo "\${x:-'$(${v})'}"`,
    `echo "\${x#'$(${v})'}" "\${x/'a'/'$(${v})'}"`,
    `echo \${x:-'$(${h})'} \${x:-"'$(${v})'"}`,
    `echo "a\\"$(${v})\\"" "$(echo ")")"`,
    `echo "\${x:-"$(${v})"}"`,
    `echo $(case a in a) ${v};; esac)`,
    `echo $(case a in (a) ${v};; esac) $(echo a # )\n${v})`,
    `echo $( (${v}) ) $((1) )`,
    `((${v}) ); ${k}`,
    `a='x'"y"$(${v}); export b=$(${v}) c; declare -a d=($(${v})); ${k}`,
    `f() { local x=$(${v}); }; f`,
    `[[ $(${v}) == x ]]; [ "$(${v})" = x ]`,
    `while read -r l; do ${k}; done <<< "$(${v})"`,
    `echo a | while read l; do ${k}; done`,
    `x=$(<s.sh); ${k}`,
    `time ${k} | cat`,
    `! ${k} | cat`,
    `if ! ${k}; then ${v}; fi`,
    `{ ${k}; } 2>&1 | cat`,
    `echo done; { echo }; }; echo esac`,
    `echo \${@:1} \${#} \${x:-$((1))}`,
    `cat <<EOF\n\${x:-'$(${v})'} '$(${v})'\nEOF`,
    `echo \`${v}\` "\`${h}\`"`,
    `x=1; case $x in 1) ${k} ;; esac`,
    `echo "\${x:-$((x))}" \${y:+$((x))}`,
    `echo "\${x:-$(( x ))}" $((x) ) $( (x) )`,
  ];
}

export const TRICKY_FORMS = 60;
