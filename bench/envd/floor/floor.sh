#!/bin/bash
# The floor under envd's start-up and idle memory: a JDK HTTP server that answers 204 and nothing else
# (HealthFloor.java), started with envd's own jvm.options and its own AOT cache, measured by the same scripts as envd.
#
#   bash bench/envd/floor/floor.sh [--rt]     # builds /tmp/envd-floor (jar, jvm.options, AOT cache), then measures
#   node bench/envd/floor/measure.mjs /tmp/envd-floor [--rt]                      # measures again
#
# Prints start -> first 204 (min / median / max of 10, from bench/envd/startup-phases.mjs's poller, so the numbers
# compare with envd's) and RSS / PSS / private / anonymous memory 2 s and 12 s after start, by mapping.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
source "$repo/scripts/lib/env.sh"
out=${FLOOR_DIR:-/tmp/envd-floor}
rm -rf "$out" && mkdir -p "$out/classes"
"$JAVA_HOME/bin/javac" -d "$out/classes" "$repo/bench/envd/floor/HealthFloor.java"
"$JAVA_HOME/bin/jar" --create --file "$out/floor.jar" -C "$out/classes" .   # an AOT cache takes jars, not directories
# envd's JVM options without its own properties (SLF4J's)
grep -v '^-Dslf4j' "$repo/agentenv-envd/jvm.options" > "$out/jvm.options"
(cd "$out" && "$JAVA_HOME/bin/java" @jvm.options -XX:AOTCacheOutput=floor.aot -Xlog:aot=error,cds=error \
  -cp floor.jar HealthFloor 0 --train)
ls -l "$out/floor.aot"
node "$repo/bench/envd/floor/measure.mjs" "$out" "$@"
