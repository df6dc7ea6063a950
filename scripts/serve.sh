#!/usr/bin/env bash
# Sets up this host, builds the project and runs the server with its embedded defaults:
#   REST API on 0.0.0.0:3000 (AENV_LISTEN), state under /var/lib/agentenv (AENV_HOME), the container backend,
#   the default template `base` (built by the host setup on first run, reused afterwards).
# The API key is AENV_API_KEY, or the file the server names in its first log lines.
# Everything the server reads is listed in agentenv-server's ServerConfig and in docs/architecture.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/env.sh

[[ $EUID -eq 0 ]] || { echo "serve.sh: run as root (the host setup installs packages and manages cgroups, mounts and network namespaces)" >&2; exit 1; }
# The JVM options this JDK accepts (Java 25 or newer, else a clear error before anything is built; an experimental
# option of Temurin 25 another JDK lacks is left out with a warning rather than refusing to start).
jvm_options=$(scripts/lib/server-jvm-options.sh "$JAVA_HOME/bin/java" agentenv-server/jvm.options) ||
  { echo "serve.sh: cannot run the server with $JAVA_HOME/bin/java (see above)" >&2; exit 1; }
mapfile -t jvm_options <<<"$jvm_options"

scripts/setup-host.sh
mvn -B -q -ntp -DskipTests package
if [[ ${AENV_BACKEND:-container} == container ]]; then
  # The container backend's envd distribution (built above) and the JDK envd runs on inside every sandbox; the other
  # AENV_BACKEND_* settings (CPU_COUNT, MEMORY_MB, POOL_SIZE, NO_NEW_PRIVILEGES, ...) are in docs/container-backend.md.
  export AENV_BACKEND_ENVD_DIR="${AENV_BACKEND_ENVD_DIR:-$PWD/agentenv-envd/target}"
  export AENV_BACKEND_JDK_HOME="${AENV_BACKEND_JDK_HOME:-$JAVA_HOME}"
fi
# The server's JVM options (agentenv-server/jvm.options, as checked above) and its AOT cache (classes and JIT profiles,
# recorded by `mvn package` with exactly these options): a faster start and warm-up. Only a cache newer than the jar is
# used (the JVM checks a jar's size, not always its contents); without one the server starts as before, only slower.
aot=()
[[ agentenv-server/target/agentenv-server.aot -nt agentenv-server/target/agentenv-server.jar ]] &&
  aot=(-XX:AOTCache=agentenv-server/target/agentenv-server.aot)
exec "$JAVA_HOME/bin/java" "${jvm_options[@]}" "${aot[@]}" \
  -jar agentenv-server/target/agentenv-server.jar "$@"
