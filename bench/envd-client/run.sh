#!/usr/bin/env bash
# Runs ClientLatency.java against the packaged envd (agentenv-envd/target) with the envd client's runtime classpath.
#   bench/envd-client/run.sh [calls]      (builds agentenv-envd-client and agentenv-envd first)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
source scripts/lib/env.sh
cp_file="$(mktemp)"
trap 'rm -f "$cp_file"' EXIT
# the client is last in reactor order, so its classpath is what stays in the file
mvn -B -q -pl agentenv-envd-client -am package dependency:build-classpath -DskipTests \
    -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=runtime
classpath="agentenv-envd-client/target/classes:$(cat "$cp_file")"
"$JAVA_HOME/bin/java" -cp "$classpath" bench/envd-client/ClientLatency.java agentenv-envd/target "${1:-2000}"
