#!/usr/bin/env bash
# Start-up of the aenv CLI, A/B in one hyperfine run: `aenv --help` (no server call) and `aenv list` (one REST call to
# a running server), each through bin/aenv with the AOT cache, through bin/aenv without it (AENV_AOT=off), and as the
# plain `java -jar aenv.jar` the README used before the launcher (same JDK, default JVM options).
#
#   bench/cli/startup.sh            # needs: a running server (AENV_API_URL, default http://localhost:3000) and its key
#                                   # (AENV_API_KEY, default: /var/lib/agentenv/secrets/api-key); hyperfine (apt-get
#                                   # install hyperfine); jars and cache built by scripts/serve.sh or mvn package
#   RUNS=30 bench/cli/startup.sh    # more runs (default 20, after 3 warm-ups)
#
# Prints the machine's load before and after (the other processes of a shared machine move the numbers), and writes
# the table to bench/cli/last-run.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/env.sh
export AENV_API_URL=${AENV_API_URL:-http://localhost:3000}
if [[ -z ${AENV_API_KEY:-} ]]; then
  AENV_API_KEY=$(cat /var/lib/agentenv/secrets/api-key)
fi
export AENV_API_KEY
command -v hyperfine >/dev/null || { echo "startup.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
jar=agentenv-cli/target/aenv.jar
cache=agentenv-cli/target/aenv.aot
[[ -f $jar ]] || { echo "startup.sh: $jar missing (mvn -B -pl agentenv-cli -am package -DskipTests)" >&2; exit 1; }
[[ $cache -nt $jar ]] || { echo "startup.sh: $cache missing or older than the jar (mvn package records it)" >&2; exit 1; }
bin/aenv list >/dev/null || { echo "startup.sh: aenv list failed: is the server at $AENV_API_URL running?" >&2; exit 1; }

echo "cpus: $(nproc); $(uptime)"
hyperfine -N --warmup 3 --runs "${RUNS:-20}" --export-markdown bench/cli/last-run.md \
  -n 'help: bin/aenv (AOT cache)' 'bin/aenv --help' \
  -n 'help: bin/aenv AENV_AOT=off' 'env AENV_AOT=off bin/aenv --help' \
  -n 'help: java -jar aenv.jar' "$JAVA_HOME/bin/java -jar $jar --help" \
  -n 'list: bin/aenv (AOT cache)' 'bin/aenv list' \
  -n 'list: bin/aenv AENV_AOT=off' 'env AENV_AOT=off bin/aenv list' \
  -n 'list: java -jar aenv.jar' "$JAVA_HOME/bin/java -jar $jar list"
echo "$(uptime)"
