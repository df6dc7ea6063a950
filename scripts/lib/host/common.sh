# Shared by scripts/setup-host.sh and the files next to this one: logging, timed steps, apt mirror discovery.
# Sourced, never executed.

AENV_LOG_PREFIX="${AENV_LOG_PREFIX:-setup-host}"

# Current time in milliseconds (bash 5 EPOCHREALTIME, no extra process).
now_ms() { local t=${EPOCHREALTIME/./}; echo $(( t / 1000 )); }

die() { printf '[%s] ERROR: %s\n' "$AENV_LOG_PREFIX" "$*" >&2; exit 1; }

# step NAME FUNCTION [ARGS...]: runs FUNCTION, prints one line "NAME ... <detail> (<ms> ms)".
# FUNCTION reports a short result by writing it to the file named by $STEP_NOTE; its own output goes to $STEP_LOG.
step() {
  local name=$1; shift
  local start end rc note
  start=$(now_ms)
  : > "$STEP_NOTE"
  set +e
  ( set -e; "$@" ) >>"$STEP_LOG" 2>&1
  rc=$?
  set -e
  end=$(now_ms)
  note=$(<"$STEP_NOTE")
  if (( rc != 0 )); then
    printf '[%s] %-18s FAILED after %d ms: %s\n' "$AENV_LOG_PREFIX" "$name" $((end - start)) "${note:-see log}" >&2
    printf '[%s] last lines of %s:\n' "$AENV_LOG_PREFIX" "$STEP_LOG" >&2
    tail -n 25 "$STEP_LOG" | sed 's/^/    /' >&2
    exit "$rc"
  fi
  printf '[%s] %-18s %s (%d ms)\n' "$AENV_LOG_PREFIX" "$name" "${note:-ok}" $((end - start))
}

note() { printf '%s' "$*" > "$STEP_NOTE"; }

# fail MESSAGE: the step fails with MESSAGE as the one-line reason (shown instead of "see log").
fail() { note "$*"; echo "ERROR: $*"; exit 1; }

# The first URI of the machine's own apt configuration that serves the given suite (default: this host's release).
# Reads deb822 files (/etc/apt/sources.list.d/*.sources) and one-line lists; never a built-in host name.
apt_mirror_uri() {
  local suite=${1:-$(. /etc/os-release && echo "$VERSION_CODENAME")}
  local uri=""
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    uri=$(awk -v suite="$suite" '
      BEGIN { RS=""; FS="\n" }
      {
        types=""; uris=""; suites=""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^Types:/)  { types=$i }
          if ($i ~ /^URIs:/)   { uris=$i; sub(/^URIs:[ \t]*/, "", uris) }
          if ($i ~ /^Suites:/) { suites=" " $i " " }
        }
        if (types ~ /(^|[ \t])deb([ \t]|$)/ && index(suites, " " suite " ") > 0) { split(uris, u, /[ \t]+/); print u[1]; exit }
      }' "$f")
    [[ -n $uri ]] && break
  done
  if [[ -z $uri ]]; then
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [[ -f $f ]] || continue
      uri=$(awk -v suite="$suite" '$1 == "deb" { o = ($2 ~ /^\[/) ? 1 : 0; if ($(3 + o) == suite) { print $(2 + o); exit } }' "$f")
      [[ -n $uri ]] && break
    done
  fi
  [[ -n $uri ]] || return 1
  printf '%s\n' "$uri"
}

# The keyring the machine's apt configuration uses for that mirror (deb822 Signed-By), or the Debian default.
apt_keyring() {
  local k
  k=$(awk '/^Signed-By:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  printf '%s\n' "${k:-/usr/share/keyrings/debian-archive-keyring.gpg}"
}
