#!/usr/bin/env bash
# Checks the units with `systemd-analyze verify` in a throw-away root that holds what they name (the JDK, the setup
# script, the environment files made from the examples, systemd's own units), so that this host needs no install.
# Any line systemd-analyze prints (a warning it does not fail on, such as a bad value it ignores) fails the check.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
java_home=${AENV_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
command -v systemd-analyze >/dev/null || { echo "verify.sh: systemd-analyze is missing (apt-get install systemd)" >&2; exit 1; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/opt/agentenv/scripts" "$root/etc/agentenv" "$root/etc/systemd/system" "$root/usr/lib/systemd" \
  "$root/usr/lib/jvm/temurin-25-jdk-amd64/bin"
cp "$java_home/bin/java" "$root/usr/lib/jvm/temurin-25-jdk-amd64/bin/java"
cp "$repo/scripts/setup-host.sh" "$root/opt/agentenv/scripts/setup-host.sh"
cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
cp "$here/node.env.example" "$root/etc/agentenv/node.env"
cp "$here/gateway.env.example" "$root/etc/agentenv/gateway.env"
cp "$here"/*.service "$root/etc/systemd/system/"
out=$(systemd-analyze verify --root="$root" "$root"/etc/systemd/system/agentenv-*.service 2>&1) || {
  echo "$out" >&2; exit 1; }
[[ -z $out ]] || { echo "$out" >&2; exit 1; }
echo "verify.sh: agentenv-node.service and agentenv-gateway.service verified"
