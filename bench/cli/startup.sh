#!/usr/bin/env bash
# Start-up of the aenv CLI, A/B in one run: `aenv --help` (no server call) and `aenv list` (one REST call to a running
# server), each through bin/aenv with the AOT cache, through bin/aenv without it (AENV_AOT=off), and as a plain
# `java -jar aenv.jar` (same JDK, default JVM options: how the README ran it before bin/aenv). The variants run
# interleaved, round after round, so that the load of a shared machine drifting during the run hits them alike; each
# run's wall, user and system time come from bash's `time`. Reported per variant: median and minimum of the wall time,
# and the median CPU time (user + system: less moved by other processes than the wall time, but it counts the JIT's
# threads too).
#
#   bench/cli/startup.sh                      # needs a running server: AENV_API_URL (default http://localhost:3000) and
#                                             # AENV_API_KEY (default: /var/lib/agentenv/secrets/api-key); the jar and
#                                             # its cache built by scripts/serve.sh or mvn package
#   RUNS=30 bench/cli/startup.sh              # rounds (default 20, after one warm-up round)
#   BEFORE_JAR=/path/to/aenv.jar bench/cli/startup.sh   # adds another build (e.g. main's) run through bin/aenv, with
#                                                       # the AOT cache beside it when it has one, to compare
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/env.sh
export AENV_API_URL=${AENV_API_URL:-http://localhost:3000}
if [[ -z ${AENV_API_KEY:-} ]]; then
  AENV_API_KEY=$(cat /var/lib/agentenv/secrets/api-key)
fi
export AENV_API_KEY
jar=agentenv-cli/target/aenv.jar
cache=agentenv-cli/target/aenv.aot
[[ -f $jar ]] || { echo "startup.sh: $jar missing (mvn -B -pl agentenv-cli -am package -DskipTests)" >&2; exit 1; }
[[ $cache -nt $jar ]] || { echo "startup.sh: $cache missing or older than the jar (mvn package records it)" >&2; exit 1; }
bin/aenv list >/dev/null || { echo "startup.sh: aenv list failed: is the server at $AENV_API_URL running?" >&2; exit 1; }

names=() commands=()
variant() { names+=("$1"); commands+=("$2"); }
for args in --help list; do
  variant "${args#--}: bin/aenv (AOT cache)" "bin/aenv $args"
  variant "${args#--}: bin/aenv AENV_AOT=off" "AENV_AOT=off bin/aenv $args"
  variant "${args#--}: java -jar aenv.jar" "$JAVA_HOME/bin/java -jar $jar $args"
  [[ -n ${BEFORE_JAR:-} ]] && variant "${args#--}: BEFORE_JAR (bin/aenv)" "AENV_JAR=$BEFORE_JAR bin/aenv $args"
done

runs=${RUNS:-20}
samples=$(mktemp)
trap 'rm -f "$samples"' EXIT
echo "cpus: $(nproc); before: $(uptime)"
TIMEFORMAT='%3R %3U %3S'
for ((round = 0; round <= runs; round++)); do
  for i in "${!commands[@]}"; do
    t=$( { time bash -c "${commands[$i]}" >/dev/null 2>&1; } 2>&1 )
    ((round == 0)) || echo "$i $t" >>"$samples"
  done
done
echo "after: $(uptime)"
printf '\n| %-32s | %9s | %9s | %14s |\n|%s|%s|%s|%s|\n' "command ($runs runs each)" "wall p50" "wall min" "CPU p50 (u+s)" \
  "---" "---:" "---:" "---:"
for i in "${!commands[@]}"; do
  awk -v i="$i" '$1 == i { print $2 * 1000, ($3 + $4) * 1000 }' "$samples" | sort -n -k1,1 >"$samples.w"
  wall_p50=$(awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }' "$samples.w")
  wall_min=$(head -1 "$samples.w" | cut -d' ' -f1)
  cpu_p50=$(cut -d' ' -f2 "$samples.w" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  printf '| %-32s | %6.0f ms | %6.0f ms | %11.0f ms |\n' "${names[$i]}" "$wall_p50" "$wall_min" "$cpu_p50"
  rm -f "$samples.w"
done
