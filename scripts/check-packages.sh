#!/usr/bin/env bash
# CI's guard against a missing install step: every Debian package whose files a command used must
# be one that scripts/setup.sh brings to a fresh Debian 12 machine.
#
#   scripts/check-packages.sh run COMMAND...        runs COMMAND under strace, then checks
#   scripts/check-packages.sh check TRACE [LIST]    checks a trace written by `run`, against
#                                                   LIST (a file, one package a line) instead of
#                                                   `scripts/setup.sh --print-packages`
#
# A fresh machine has what `mmdebstrap --variant=apt` installs (Essential packages and apt), plus
# the listed packages and everything they Depend or Pre-Depend on. A package this machine has
# only because someone installed it by hand is outside that set: if the command opened or ran
# one of its files, a fresh machine would fail where this one passed, and so this check fails.
# Only successful opens and executions count, so a probe for something absent (CMake looks for
# many optional things) is not a use.
set -euo pipefail
cd "$(dirname "$0")/.."

# Packages a command may use although setup.sh does not install them, because what uses them
# reads them only when they are there and does without them on a fresh machine (each was checked
# there: scripts/fresh-root-check.sh passes without them).
ignored=(
    libssl-dev # Qt's TLS backend tries the unversioned libssl.so first; libssl3 serves otherwise
    locales    # glibc reads /usr/share/locale/locale.alias when it exists
    netbase    # glibc's address lookups read /etc/services when it exists; ports here are numbers
    openssl    # OpenSSL reads /usr/lib/ssl/openssl.cnf when it exists, defaults otherwise
    tzdata     # Qt and glibc read the local time zone when there is one, else use UTC
)

usage() {
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

trace_paths() { # TRACE -> absolute paths of files opened or executed successfully, unique
    # strace -f lines: `1234  openat(AT_FDCWD, "/usr/lib/x.so", O_RDONLY|O_CLOEXEC) = 3`, or a
    # call split in two by another thread: `... <unfinished ...>`, then `<... openat resumed>) = 3`.
    awk '
        function keep(path) {
            if (path ~ /^\/(proc|sys|dev|tmp|run|var\/tmp|var\/cache|root|home)\//) return
            # Directories read whole, whatever they hold: the loader configuration, and the
            # plugins binutils loads (ar and ld open every plugin installed there).
            if (path ~ /^\/etc\/ld\.so\.conf\.d\// || path ~ /\/bfd-plugins\//) return
            if (!(path in seen)) { seen[path] = 1; print path }
        }
        function succeeded(line) { return line ~ /\) += [0-9]+/ || line ~ /resumed>.*= [0-9]+/ }
        /(openat|execve)\(/ && !/O_DIRECTORY/ && match($0, /"\/[^"]*"/) {
            path = substr($0, RSTART + 1, RLENGTH - 2)
            if ($0 ~ /<unfinished \.\.\.>$/) pending[$1] = path
            else if (succeeded($0)) keep(path)
            next
        }
        /<\.\.\. (openat|execve) resumed>/ {
            if (($1 in pending) && succeeded($0)) keep(pending[$1])
            delete pending[$1]
        }' "$1"
}

owners_of_paths() { # reads paths on stdin -> "package<TAB>path" for each path a package owns
    # One index of every installed file, from dpkg's own lists: far faster than dpkg -S per path.
    # /usr-merge means a file may be listed as /lib/... but opened as /usr/lib/... (or the
    # reverse), and alternatives links are owned by nobody: try the other spelling, then the
    # resolved path.
    local resolved index
    resolved=$(mktemp)
    index=$(mktemp)
    while IFS= read -r path; do
        printf '%s\t%s\n' "$path" "$(readlink -f -- "$path" 2>/dev/null || echo "$path")"
    done >"$resolved"
    awk '{ owner = FILENAME; sub(/.*\//, "", owner); sub(/\.list$/, "", owner); sub(/:.*/, "", owner)
           print $0 "\t" owner }' /var/lib/dpkg/info/*.list >"$index"
    awk -F '\t' '
        FNR == NR { if (!($1 in owned)) owned[$1] = $2; next }
        function lookup(p,   alt) {
            if (p in owned) return owned[p]
            alt = p
            if (sub(/^\/usr\//, "/", alt) && (alt in owned)) return owned[alt]
            alt = "/usr" p
            if (alt in owned) return owned[alt]
            return ""
        }
        {
            owner = lookup($1)
            if (owner == "") owner = lookup($2)
            if (owner != "") print owner "\t" $1
        }' "$index" "$resolved"
    rm -f "$resolved" "$index"
}

fresh_machine_packages() { # LIST -> every package a fresh machine would have, one per line
    # Closure over Depends and Pre-Depends, as installed here (setup.sh installs no Recommends).
    # An alternative "a | b" counts as its first installed choice; a virtual package as each
    # installed package that provides it.
    dpkg-query -W -f='${Package}\t${db:Status-Status}\t${Essential}\t${Provides}\t${Pre-Depends}, ${Depends}\n' |
        awk -F '\t' -v list="$1" '
        function bare(token) {
            gsub(/\([^)]*\)|\[[^]]*\]|<[^>]*>/, "", token)
            gsub(/[ \t]/, "", token)
            sub(/:.*/, "", token)
            return token
        }
        function add(name) {
            if (name in installed && !(name in closure)) { closure[name] = 1; queue[++tail] = name }
            else if (name in provider) {
                n = split(provider[name], names, " ")
                for (k = 1; k <= n; k++) if (!(names[k] in closure)) { closure[names[k]] = 1; queue[++tail] = names[k] }
            }
        }
        $2 == "installed" {
            installed[$1] = 1
            deps[$1] = $5
            if ($3 == "yes" || $1 == "apt") base[$1] = 1
            np = split($4, provided, ",")
            for (i = 1; i <= np; i++) { p = bare(provided[i]); if (p != "") provider[p] = provider[p] " " $1 }
        }
        END {
            while ((getline name < list) > 0) { name = bare(name); if (name != "") add(name) }
            for (name in base) add(name)
            for (head = 1; head <= tail; head++) {
                ng = split(deps[queue[head]], groups, ",")
                for (g = 1; g <= ng; g++) {
                    na = split(groups[g], choices, "|")
                    for (c = 1; c <= na; c++) {
                        choice = bare(choices[c])
                        if (choice != "" && ((choice in installed) || (choice in provider))) { add(choice); break }
                    }
                }
            }
            for (name in closure) print name
        }'
}

check() { # TRACE [LIST]
    local trace="$1" list="${2:-}" own_list=""
    if [ -z "$list" ]; then
        own_list=$(mktemp)
        ./scripts/setup.sh --print-packages >"$own_list"
        list="$own_list"
    fi
    local expected used
    expected=$(mktemp)
    used=$(mktemp)
    { fresh_machine_packages "$list"; printf '%s\n' "${ignored[@]}"; } | sort -u >"$expected"
    trace_paths "$trace" | owners_of_paths | sort -t "$(printf '\t')" -k1,1 -u >"$used"

    local missing
    missing=$(awk -F '\t' 'FNR == NR { expected[$1] = 1; next } !($1 in expected)' "$expected" "$used")
    local used_count
    used_count=$(wc -l <"$used")
    rm -f "$expected" "$used" ${own_list:+"$own_list"}
    if [ -n "$missing" ]; then
        echo "package guard: FAILED. These packages were used but a fresh machine would not have"
        echo "them: add them to scripts/setup.sh (or, with a reason, to the ignore list here)."
        echo "$missing" | awk -F '\t' '{ printf "  %-32s e.g. %s\n", $1, $2 }'
        return 1
    fi
    echo "package guard: ok, all $used_count packages used are installed by scripts/setup.sh"
}

[ $# -ge 1 ] || usage
case "$1" in
run)
    shift
    [ $# -ge 1 ] || usage
    command -v strace >/dev/null || { echo "$0: needs strace (scripts/setup.sh installs it)" >&2; exit 2; }
    mkdir -p build
    trace=build/package-trace.txt
    # seccomp-bpf stops the traced process only for the two calls traced, so the tests run at
    # nearly full speed. (strace 6.1's -Z drops every line together with --seccomp-bpf: failed
    # calls are filtered out while reading the trace instead.)
    status=0
    strace -f -qq --seccomp-bpf -e trace=openat,execve -s 512 -o "$trace" "$@" || status=$?
    guard=0
    check "$trace" || guard=$?
    [ "$status" -eq 0 ] || exit "$status"
    exit "$guard"
    ;;
check)
    shift
    [ $# -ge 1 ] || usage
    check "$@"
    ;;
*) usage ;;
esac
