#!/usr/bin/env bash
# Alternating A/B runs of server builds under one bench command: before each run the variant's agentenv-server.jar and
# agentenv-server.aot (saved with `cp -p` from agentenv-server/target after a `mvn -B -q -o -pl agentenv-server -am
# package -DskipTests` of each variant, so the AOT cache still matches its jar's time stamp) are copied into
# agentenv-server/target (and, when the variant dir has a lib/ saved the same way, its jars into
# agentenv-server/target/lib: a change to the backend, the SPI or the envd client is in those jars, and the AOT cache
# is used only with the jars it was recorded with), and the command runs; `rounds` alternations, each variant once
# per alternation, in the order given. A variant dir with a file jvm-extra runs with its content as
# BENCH_SERVER_JVM_EXTRA (JVM options on top of agentenv-server/jvm.options; record that variant's AOT cache with them
# in jvm.options, or the JVM ignores the cache). The variant's name and the command's output go to stdout. The variants' jars are left in place after
# the last run: rebuild (or copy the one you want) afterwards.
#   bench/container/server-ab.sh <rounds> <variant-dir>... -- <command...>
# Save a variant (after its package):
#   d=/tmp/v/new; mkdir -p $d && cp -p agentenv-server/target/agentenv-server.{jar,aot} $d && cp -rp agentenv-server/target/lib $d
# e.g. AENV_BACKEND_POOL_SIZE=20 bench/container/server-ab.sh 5 /tmp/v/base /tmp/v/new -- node bench/container/sdk-wire.mjs 2
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=$1
shift
variants=()
while [[ $# -gt 0 && $1 != -- ]]; do variants+=("$1"); shift; done
[[ $# -gt 0 ]] || { echo "usage: $0 <rounds> <variant-dir>... -- <command...>" >&2; exit 2; }
shift
for dir in "${variants[@]}"; do
  [[ -f $dir/agentenv-server.jar && -f $dir/agentenv-server.aot ]] || { echo "$dir: no agentenv-server.jar + .aot" >&2; exit 2; }
done
for ((round = 1; round <= rounds; round++)); do
  for dir in "${variants[@]}"; do
    cp -p "$dir/agentenv-server.jar" "$dir/agentenv-server.aot" agentenv-server/target/
    if [[ -d $dir/lib ]]; then cp -p "$dir"/lib/*.jar agentenv-server/target/lib/; fi
    echo "=== alternation $round, variant $(basename "$dir") ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))"
    if [[ -f $dir/jvm-extra ]]; then
      BENCH_SERVER_JVM_EXTRA="$(cat "$dir/jvm-extra")" "$@"
    else
      "$@"
    fi
  done
done
