#!/usr/bin/env bash
# A local three-node cluster on this one machine, to try the cluster out (docs/cluster.md, "Local cluster"):
#   scripts/cluster.sh [--no-build]   sets up the host and builds as scripts/serve.sh does (--no-build: neither), then
#                                     starts PostgreSQL 15, S3Proxy, three nodes (each in a network namespace of its
#                                     own, the container backend) and two gateways on 127.0.0.1:3100 and :3101, prints
#                                     how to use them and stays in the foreground; Ctrl-C or SIGTERM stops everything
#                                     and leaves nothing on the host (the logs stay in <state dir>/logs)
#   scripts/cluster.sh stop           stops what a killed run left (processes, namespaces, links, mounts, cgroups)
# State under /var/lib/agentenv-cluster; every setting (ports, addresses, names) is in scripts/lib/cluster.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/env.sh
source scripts/lib/host/network.sh
source scripts/lib/postgres.sh
source scripts/lib/cluster.sh

[[ $EUID -eq 0 ]] || { echo "cluster.sh: run as root (PostgreSQL runs as postgres; the nodes make namespaces, mounts and cgroups)" >&2; exit 1; }
cluster_settings

build=1
case ${1:-} in
  stop) cluster_stop; exit 0 ;;
  --no-build) build=0 ;;
  "") ;;
  *) echo "usage: scripts/cluster.sh [--no-build] | scripts/cluster.sh stop" >&2; exit 2 ;;
esac

if (( build )); then
  scripts/setup-host.sh
  ensure_postgres
  mvn -B -q -ntp -DskipTests package
fi
[[ -x $CLUSTER_PG_BIN/postgres ]] ||
  { echo "cluster.sh: PostgreSQL 15 is missing (scripts/cluster.sh without --no-build installs it)" >&2; exit 1; }

# from the first thing started on: whatever ends this script stops the cluster
trap 'cluster_stop' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cluster_start

read -r gateway1 gateway2 <<<"$(sed -n 's/^GATEWAY_URLS=//p' "$CLUSTER_DIR/cluster.env")"
cat <<INFO

The local cluster runs: gateways $gateway1 and $gateway2, nodes $(sed -n 's/^NODE_URLS=//p' "$CLUSTER_DIR/cluster.env")
(PostgreSQL on 127.0.0.1:$CLUSTER_PG_PORT, S3Proxy on $CLUSTER_SERVICE_ADDRESS:$CLUSTER_S3_PORT, logs in $CLUSTER_LOGS).
API key: $CLUSTER_API_KEY (also in $CLUSTER_DIR/api-key). In a second shell, from the repository's root:

  (cd e2e && npm ci --no-audit --no-fund)    # once: the npm e2b SDK
  export E2B_API_KEY=\$(cat $CLUSTER_DIR/api-key) E2B_API_URL=$gateway1 E2B_SANDBOX_URL=$gateway1
  (cd e2e && node -e "const {Sandbox}=require('e2b'); (async()=>{const s=await Sandbox.create(); console.log((await s.commands.run('hostname')).stdout); await s.kill()})()")
  export PATH=\$PWD/bin:\$PATH AENV_API_URL=$gateway2 AENV_API_KEY=\$(cat $CLUSTER_DIR/api-key)
  id=\$(aenv create base); aenv exec \$id -- uname -a; aenv list; aenv node ls; aenv kill \$id

Ctrl-C stops the cluster.
INFO
echo "cluster ready"
while true; do sleep 1 & wait $! || true; done
