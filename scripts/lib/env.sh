# Sourced by the project's scripts: the toolchain they use, whatever the machine's defaults are.
export JAVA_HOME="${AENV_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export PATH="$JAVA_HOME/bin:$PATH"
export MAVEN_OPTS="${MAVEN_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
# Where host-level artifacts (CRIU build, template root filesystems) are cached between runs.
export AENV_CACHE_DIR="${AENV_CACHE_DIR:-/var/cache/agentenv}"
