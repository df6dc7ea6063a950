#!/usr/bin/env bash
# Java-level benchmark of the container backend (ContainerBench.java) on this host, through the SPI the orchestrator
# uses, with commands run through envd's process API as the SDK runs them. Needs root and scripts/setup-host.sh.
#   bench/container/run.sh [iterations] [warm pool size]   (default 30, 0; builds envd and the backend first)
#   bench/container/run.sh 30 0 pause   (only the pause and resume rows)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
source scripts/lib/env.sh
[[ $EUID -eq 0 ]] || { echo "run as root (containers, mounts, network namespaces)" >&2; exit 1; }
scripts/setup-host.sh >/dev/null
cp_file="$(mktemp)"
trap 'rm -f "$cp_file"' EXIT
mvn -B -q -pl agentenv-backend-container -am package dependency:build-classpath -DskipTests \
    -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=runtime
classpath="agentenv-backend-container/target/classes:$(cat "$cp_file")"
exec nice -n -5 "$JAVA_HOME/bin/java" -XX:+UseSerialGC -cp "$classpath" bench/container/ContainerBench.java \
    "$root/agentenv-envd/target" "${1:-30}" "${2:-0}" ${3:+"$3"}
