#!/usr/bin/env bash
# Checks the course's example C programs:
#  1. every *.c compiles with -std=gnu11 -O2 -Wall -Wextra -Werror and links;
#  2. region markers (`// region: NAME` ... `// endregion: NAME`, alone on their lines)
#     pair up, do not nest and are unique per file; a region shows 5-30 lines;
#  3. every `// zh:` line has an adjacent `// en:` partner and vice versa, zh lines hold
#     Chinese, en lines none; no zh/en comment trails code; plain `//` comments are not prose
#     (they are shown in both languages);
#  4. every {{code:FILE#REGION}} in course/*/chapters names an existing file and region;
#  5. every file has exactly one `// playground: NAME` line, and NAME is `none` or names an
#     existing session scenarios/verbs/NAME.toml (the page's "open in the playground" button).
# Exit status 0 when everything holds, 1 otherwise.
set -u
cd "$(dirname "$0")"
COURSE=..
SESSIONS=../../scenarios/verbs
CC=${CC:-gcc}
CFLAGS="-std=gnu11 -O2 -Wall -Wextra -Werror"
errors=0
err() { echo "check.sh: $*" >&2; errors=$((errors + 1)); }

shopt -s nullglob
files=(*.c)
[ ${#files[@]} -gt 0 ] || { err "no .c files in $(pwd)"; exit 1; }

# 1. compile and link
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "${files[@]}"; do
    if ! $CC $CFLAGS -c "$f" -o /dev/null 2>"$tmp/log"; then
        err "$f does not compile cleanly:"; cat "$tmp/log" >&2
    elif ! $CC $CFLAGS -o "$tmp/${f%.c}" "$f" -libverbs -lrdmacm 2>"$tmp/log"; then
        err "$f does not link:"; cat "$tmp/log" >&2
    else
        echo "ok   compile+link $f"
    fi
done

# 2 and 3: markers, pairs, comment hygiene (byte-wise, so CJK is matched by UTF-8 lead bytes)
for f in "${files[@]}"; do
    out=$(LC_ALL=C awk -v F="$f" '
        function bad(msg) { print F ":" i ": " msg; nbad++ }
        function kind(s) {
            if (s ~ /^[ \t]*\/\/ zh: /) return "zh"
            if (s ~ /^[ \t]*\/\/ en: /) return "en"
            return ""
        }
        BEGIN {
            np = split("the and for with from this that are not only must when into its but has " \
                       "have was will here there which what our their then than may can does", pw, " ")
            for (j = 1; j <= np; j++) prose[pw[j]] = 1
        }
        { line[NR] = $0 }
        END {
            open = ""
            for (i = 1; i <= NR; i++) {
                s = line[i]
                if (s ~ /^[ \t]*\/\/ region: [A-Za-z0-9_]+[ \t]*$/) {
                    name = s; sub(/^[ \t]*\/\/ region: /, "", name); sub(/[ \t]*$/, "", name)
                    if (open != "") bad("region " name " opens inside region " open)
                    if (name in seen) bad("region " name " defined twice")
                    seen[name] = 1; open = name; start = i; shown = 0; continue
                }
                if (s ~ /^[ \t]*\/\/ endregion: [A-Za-z0-9_]+[ \t]*$/) {
                    name = s; sub(/^[ \t]*\/\/ endregion: /, "", name); sub(/[ \t]*$/, "", name)
                    if (open != name) bad("endregion " name " does not close " (open == "" ? "any open region" : "region " open))
                    else if (shown < 5 || shown > 30) bad("region " name " shows " shown " lines (want 5-30)")
                    else printf "REGION %s %d\n", name, shown
                    open = ""; continue
                }
                if (s ~ /(region|endregion):/ && s ~ /\/\//) bad("malformed region marker: " s)
                k = kind(s)
                if (open != "" && k != "en") shown++
                if (k == "" && s ~ /\/\/ *(zh|en):/) bad("zh/en comment must be alone on its line")
                if (k == "zh" && s !~ /[\344-\351]/) bad("zh comment without Chinese text")
                if (k == "en" && (s ~ /[\344-\351]/ || s ~ /\343\200|\357\274|\357\275/)) bad("en comment with Chinese text")
                if (k == "zh" || k == "en") {
                    if (paired[i]) continue
                    want = (k == "zh") ? "en" : "zh"
                    if (i < NR && kind(line[i + 1]) == want) { paired[i + 1] = 1; continue }
                    bad("// " k ": line without an adjacent // " want ": partner")
                    continue
                }
                # plain comments are shown in both languages: no prose in them
                if (match(s, /\/\/.*/)) {
                    c = tolower(substr(s, RSTART + 2)); n = 0
                    m = split(c, w, /[^a-z]+/)
                    for (j = 1; j <= m; j++) if (w[j] in prose) n++
                    if (n >= 1) bad("plain // comment looks like English prose (use a zh/en pair): " s)
                }
            }
            if (open != "") bad("region " open " (line " start ") is never closed")
        }' "$f")
    while IFS= read -r l; do
        [ -z "$l" ] && continue
        case "$l" in
            REGION\ *) set -- $l; echo "ok   ${f%.c}#$2 ($3 lines shown)"; echo "${f%.c}#$2" >>"$tmp/regions" ;;
            *) err "$l" ;;
        esac
    done <<<"$out"
done

# 4. every placeholder in the chapters resolves
refs=$(grep -rhoE '\{\{code:[^}]*\}\}' "$COURSE"/*/chapters 2>/dev/null | sort -u)
[ -n "$refs" ] || err "no {{code:...}} placeholders found under $COURSE/*/chapters"
touch "$tmp/regions"
for r in $refs; do
    key=${r#\{\{code:}; key=${key%\}\}}
    file=${key%%#*}
    if [ ! -f "$file.c" ]; then err "$r: no file $file.c"
    elif ! grep -qxF "$key" "$tmp/regions"; then err "$r: no region ${key#*#} in $file.c (or it failed a check above)"
    else echo "ok   $r"
    fi
done

# 5. each program names its playground session, and the session exists
for f in "${files[@]}"; do
    marks=$(grep -n '^[[:space:]]*//[[:space:]]*playground:' "$f")
    if [ -z "$marks" ]; then
        err "$f: no '// playground: NAME' line (NAME = a session under scenarios/verbs, or none)"
        continue
    fi
    if [ "$(printf '%s\n' "$marks" | wc -l)" -gt 1 ]; then
        err "$f: more than one '// playground:' line: $(printf '%s' "$marks" | tr '\n' ' ')"
        continue
    fi
    lineno=${marks%%:*}
    text=${marks#*:}
    if [[ ! "$text" =~ ^//\ playground:\ ([A-Za-z0-9_]+)$ ]]; then
        err "$f:$lineno: malformed playground line (want '// playground: NAME', alone on its line): $text"
        continue
    fi
    name=${BASH_REMATCH[1]}
    if [ "$name" = none ]; then
        echo "ok   $f playground: none"
    elif [ -f "$SESSIONS/$name.toml" ]; then
        echo "ok   $f playground: scenarios/verbs/$name.toml"
    else
        err "$f:$lineno: playground session scenarios/verbs/$name.toml does not exist"
    fi
done

if [ "$errors" -gt 0 ]; then
    echo "check.sh: $errors problem(s)" >&2
    exit 1
fi
echo "check.sh: all good (${#files[@]} files, $(echo "$refs" | wc -l) placeholders)"
