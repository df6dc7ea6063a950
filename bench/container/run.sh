#!/usr/bin/env bash
# Java-level benchmark of the container backend (ContainerBench.java) on this host, through the SPI the orchestrator
# uses, with commands run through envd's process API as the SDK runs them. Needs root and scripts/setup-host.sh.
#   bench/container/run.sh [iterations] [warm pool size]   (default 30, 0; builds envd and the backend first)
#   bench/container/run.sh 30 0 pause   (only the pause and resume rows)
# Each run claims one of 8 lanes (a lock under /run/agentenv/bench-lanes, held until the run ends) and uses that lane's
# names, runc dir and network slots (see ContainerBench.java), so concurrent runs never share or reap each other's.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
source scripts/lib/env.sh
[[ $EUID -eq 0 ]] || { echo "run as root (containers, mounts, network namespaces)" >&2; exit 1; }
# the lane comes from bench/lib/lane.mjs (the one implementation), which holds it until its stdin closes: that stdin is
# a pipe whose write end only this shell holds (bash marks a coproc's descriptors close-on-exec, and their copies too),
# so the lane stays claimed until this shell exits, however it exits; hence the JVM below runs as a child, not exec'd
coproc LANE_HOLDER { exec node bench/lib/lane.mjs hold; }
lane=""
read -r lane <&"${LANE_HOLDER[0]}" || true
[[ -n $lane ]] || exit 1 # lane.mjs said why on stderr
export AENV_BENCH_LANE=$lane
scripts/setup-host.sh >/dev/null
cp_file="$(mktemp)"
trap 'rm -f "$cp_file"' EXIT
mvn -B -q -pl agentenv-backend-container -am package dependency:build-classpath -DskipTests \
    -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=runtime
classpath="agentenv-backend-container/target/classes:$(cat "$cp_file")"
rm -f "$cp_file"
trap - EXIT
nice -n -5 "$JAVA_HOME/bin/java" -XX:+UseSerialGC -cp "$classpath" bench/container/ContainerBench.java \
    "$root/agentenv-envd/target" "${1:-30}" "${2:-0}" ${3:+"$3"}
