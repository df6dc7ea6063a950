# A local cluster on this one machine: a private PostgreSQL 15, S3Proxy, three nodes (the server with the container
# backend, each in a network namespace of its own) and two gateways. Sourced by scripts/cluster.sh, which the e2e
# harness (e2e/lib/cluster-harness.mjs) also runs, with settings of its own. Needs root and a host prepared by
# scripts/setup-host.sh. Everything it makes is named after its tag, and cluster_stop removes it all again, also after
# the starting script was killed (it reads what was started from the state dir).
#
# Settings (environment; the defaults are the documented local cluster's):
#   AENV_LOCAL_CLUSTER_DIR         state dir (default /var/lib/agentenv-cluster): PostgreSQL's data, S3Proxy's objects,
#                                  the nodes' data dirs, logs/, the API key and cluster.env (what runs where)
#   AENV_LOCAL_CLUSTER_TAG         one lowercase letter (default n) naming everything the cluster makes on the host:
#                                  node namespaces agentenv-node-<tag><i>, their veths acl<tag><i>, backend name
#                                  prefixes aenv<tag><i>, run dirs /run/agentenv/cluster-<tag><i>, cgroup parents
#                                  agentenv-cluster-<tag><i>, container ids cl<tag><i>-...; two clusters need two
#                                  tags, and none may be a benchmark lane's letter (bench/lib/lane.mjs: aenv<tag><lane>)
#   AENV_LOCAL_CLUSTER_NET         the first three octets of the /24 the nodes' links use (default 10.201.0): the
#                                  host's service address .1 (PostgreSQL, S3Proxy) and node i's link .4i/30 (host
#                                  end .4i+1, node .4i+2)
#   AENV_LOCAL_CLUSTER_GATEWAY_PORTS  the two gateways' ports on 127.0.0.1 (default "3100 3101")
#   AENV_LOCAL_CLUSTER_PG_PORT, AENV_LOCAL_CLUSTER_S3_PORT, AENV_LOCAL_CLUSTER_NODE_PORT  (default 3102, 3103, 3000)
#   AENV_LOCAL_CLUSTER_FIRST_SLOT, AENV_LOCAL_CLUSTER_SLOTS  node i's sandbox slots start at FIRST_SLOT + (i-1) * SLOTS
#                                  (default 15360, 64; SLOTS is also each node's AENV_BACKEND_MAX_SANDBOXES unless set)
#   AENV_LOCAL_CLUSTER_NODE_JVM, AENV_LOCAL_CLUSTER_GATEWAY_JVM  JVM options (space-separated; default: the server's
#                                  jvm.options as scripts/serve.sh runs it, with -Xmx512m and -Xmx256m)
#   AENV_LOCAL_CLUSTER_STORE       the nodes' shared storage: s3 (default: S3Proxy) or directory (a directory under
#                                  the state dir, AENV_OBJECT_STORE_DIR, and no S3Proxy: lighter, for the test suites
#                                  that do not test S3)
# Every other AENV_* setting in the environment (AENV_BACKEND_*, AENV_CLUSTER_LEASE_SECONDS, ...) reaches every node.

CLUSTER_NODES=(1 2 3)

cluster_settings() {
  CLUSTER_DIR=${AENV_LOCAL_CLUSTER_DIR:-/var/lib/agentenv-cluster}
  CLUSTER_TAG=${AENV_LOCAL_CLUSTER_TAG:-n}
  [[ $CLUSTER_TAG =~ ^[a-z]$ ]] || { echo "cluster: AENV_LOCAL_CLUSTER_TAG must be one lowercase letter" >&2; return 1; }
  CLUSTER_NET=${AENV_LOCAL_CLUSTER_NET:-10.201.0}
  [[ $CLUSTER_NET =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] ||
    { echo "cluster: AENV_LOCAL_CLUSTER_NET must be three octets (10.201.0)" >&2; return 1; }
  CLUSTER_SERVICE_ADDRESS=$CLUSTER_NET.1
  read -r -a CLUSTER_GATEWAY_PORTS <<<"${AENV_LOCAL_CLUSTER_GATEWAY_PORTS:-3100 3101}"
  CLUSTER_PG_PORT=${AENV_LOCAL_CLUSTER_PG_PORT:-3102}
  CLUSTER_S3_PORT=${AENV_LOCAL_CLUSTER_S3_PORT:-3103}
  CLUSTER_NODE_PORT=${AENV_LOCAL_CLUSTER_NODE_PORT:-3000}
  CLUSTER_FIRST_SLOT=${AENV_LOCAL_CLUSTER_FIRST_SLOT:-15360}
  CLUSTER_SLOTS=${AENV_LOCAL_CLUSTER_SLOTS:-64}
  CLUSTER_PG_BIN=/usr/lib/postgresql/15/bin
  CLUSTER_BUCKET=agentenv
  CLUSTER_STORE=${AENV_LOCAL_CLUSTER_STORE:-s3}
  [[ $CLUSTER_STORE == s3 || $CLUSTER_STORE == directory ]] ||
    { echo "cluster: AENV_LOCAL_CLUSTER_STORE must be s3 or directory" >&2; return 1; }
  CLUSTER_LOGS=$CLUSTER_DIR/logs
}

# The host's nft table of the cluster's NAT.
cluster_nat_table() { echo "agentenv_cluster_$CLUSTER_TAG"; }

# Names and addresses of node $1 (1..3).
node_netns() { echo "agentenv-node-$CLUSTER_TAG$1"; }
node_veth() { echo "$LOCAL_CLUSTER_LINKS$CLUSTER_TAG$1"; }
node_host_address() { echo "$CLUSTER_NET.$(( 4 * $1 + 1 ))"; }
node_address() { echo "$CLUSTER_NET.$(( 4 * $1 + 2 ))"; }
node_prefix() { echo "aenv$CLUSTER_TAG$1"; }
node_run_dir() { echo "/run/agentenv/cluster-$CLUSTER_TAG$1"; }
node_cgroup_parent() { echo "agentenv-cluster-$CLUSTER_TAG$1"; }
node_home() { echo "$CLUSTER_DIR/nodes/n$1"; }
node_url() { echo "http://$(node_address "$1"):$CLUSTER_NODE_PORT"; }

as_postgres() { runuser -u postgres -- "$@"; }

# cluster_log MESSAGE: one line on stderr.
cluster_log() { printf '[cluster] %s\n' "$*" >&2; }

# The JVM options of the server as scripts/serve.sh starts it, one a line.
server_jvm_options() {
  scripts/lib/server-jvm-options.sh "$JAVA_HOME/bin/java" agentenv-server/jvm.options
  [[ agentenv-server/target/agentenv-server.aot -nt agentenv-server/target/agentenv-server.jar ]] &&
    echo "-XX:AOTCache=agentenv-server/target/agentenv-server.aot"
  return 0
}

# Remembers a started process: its pid in $CLUSTER_DIR/pids/<name>.
remember_pid() { mkdir -p "$CLUSTER_DIR/pids"; echo "$2" > "$CLUSTER_DIR/pids/$1"; }

# --- network ---------------------------------------------------------------------------------------------------

# The host's service address on its loopback device (PostgreSQL and S3Proxy listen there: a node reaches it through
# its veth, and nothing outside this machine can), and per node a network namespace with a veth pair
# to the host, forwarding and the sandbox rules of scripts/lib/host/network.sh for the node's own sandboxes: they are
# made in the node's namespace (the node starts runc, ip and nft there), so their forwarding, NAT and isolation happen
# there too, as on a lone server: the node's namespace masquerades them as the node, and the host masquerades the
# nodes' addresses (table cluster_nat_table) to reach what the host reaches (its DNS resolvers, the internet where
# there is one); the sandbox rules keep them off the internal ranges.
cluster_network_up() {
  ip addr add "$CLUSTER_SERVICE_ADDRESS/32" dev lo
  nft -f - <<NFT
add table ip $(cluster_nat_table) { comment "agentenv local cluster: its nodes' traffic leaves as the host's"; }
add chain ip $(cluster_nat_table) postrouting { type nat hook postrouting priority srcnat; policy accept; }
add rule ip $(cluster_nat_table) postrouting ip saddr $CLUSTER_NET.0/24 oifname != "$LOCAL_CLUSTER_LINKS$CLUSTER_TAG*" masquerade
NFT
  local resolvers="" internal
  resolvers=$(host_resolvers | paste -sd, -)
  internal=$(IFS=,; echo "${INTERNAL_RANGES[*]}")
  local i ns veth
  for i in "${CLUSTER_NODES[@]}"; do
    ns=$(node_netns "$i") veth=$(node_veth "$i")
    ip netns add "$ns"
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    ip addr add "$(node_host_address "$i")/30" dev "$veth"
    ip link set "$veth" up
    ip -n "$ns" addr add "$(node_address "$i")/30" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" route add default via "$(node_host_address "$i")"
    ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
    sandbox_ruleset "$(node_prefix "$i")" "$SANDBOX_CIDR" "$internal" "$resolvers" | ip netns exec "$ns" nft -f -
  done
}

# --- PostgreSQL and S3Proxy ------------------------------------------------------------------------------------

cluster_postgres_up() {
  local dir=$CLUSTER_DIR/postgres
  mkdir -p "$dir"
  chown postgres: "$dir"
  chmod 700 "$dir"
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/password"
  chown postgres: "$dir/password"
  touch "$CLUSTER_LOGS/postgres.log"
  chown postgres: "$CLUSTER_LOGS/postgres.log"
  as_postgres "$CLUSTER_PG_BIN/initdb" -D "$dir/data" -U agentenv --pwfile="$dir/password" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 >"$CLUSTER_LOGS/postgres-initdb.log" 2>&1
  # the nodes connect from their links' addresses, with the password
  echo "host agentenv agentenv $CLUSTER_NET.0/24 scram-sha-256" >> "$dir/data/pg_hba.conf"
  as_postgres "$CLUSTER_PG_BIN/pg_ctl" -D "$dir/data" -l "$CLUSTER_LOGS/postgres.log" -w -o \
    "-p $CLUSTER_PG_PORT -k $dir -c listen_addresses=127.0.0.1,$CLUSTER_SERVICE_ADDRESS" start >/dev/null
  as_postgres "$CLUSTER_PG_BIN/createdb" -h "$dir" -p "$CLUSTER_PG_PORT" -U agentenv agentenv
}

# PostgreSQL restarted in place (fast shutdown, then start): what a database restart does to the cluster.
cluster_postgres_restart() {
  as_postgres "$CLUSTER_PG_BIN/pg_ctl" -D "$CLUSTER_DIR/postgres/data" -l "$CLUSTER_LOGS/postgres.log" -m fast -w \
    restart >/dev/null
}

# S3Proxy's self-contained jar: the one agentenv-objectstore's build copies, else the local Maven repository's, else
# copied there by Maven.
s3proxy_jar() {
  local built=agentenv-objectstore/target/s3proxy/s3proxy.jar version
  [[ -f $built ]] && { echo "$PWD/$built"; return; }
  version=$(sed -n 's:.*<s3proxy.version>\(.*\)</s3proxy.version>.*:\1:p' pom.xml agentenv-objectstore/pom.xml | head -1)
  local cached=$HOME/.m2/repository/org/gaul/s3proxy/$version/s3proxy-$version-jar-with-dependencies.jar
  [[ -f $cached ]] && { echo "$cached"; return; }
  mvn -B -q -ntp dependency:copy -Dartifact="org.gaul:s3proxy:$version:jar:jar-with-dependencies" \
    -DoutputDirectory="$CLUSTER_DIR/s3proxy" >&2
  echo "$CLUSTER_DIR/s3proxy/s3proxy-$version-jar-with-dependencies.jar"
}

# S3Proxy on the service address, filesystem-backed (bucket b, key k is the file <dir>/data/b/k), as
# agentenv-objectstore's S3ProxyServer starts it; the bucket is its directory.
cluster_s3proxy_up() {
  local dir=$CLUSTER_DIR/s3proxy jar
  mkdir -p "$dir/data/$CLUSTER_BUCKET"
  jar=$(s3proxy_jar)
  CLUSTER_S3_KEY=agentenv-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
  CLUSTER_S3_SECRET=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
  printf '%s\n' "s3proxy.endpoint=http://$CLUSTER_SERVICE_ADDRESS:$CLUSTER_S3_PORT" "s3proxy.authorization=aws-v2-or-v4" \
    "s3proxy.identity=$CLUSTER_S3_KEY" "s3proxy.credential=$CLUSTER_S3_SECRET" "jclouds.provider=filesystem" \
    "jclouds.identity=$CLUSTER_S3_KEY" "jclouds.credential=$CLUSTER_S3_SECRET" "jclouds.filesystem.basedir=$dir/data" \
    > "$dir/s3proxy.properties"
  chmod 600 "$dir/s3proxy.properties"
  "$JAVA_HOME/bin/java" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -DLOG_LEVEL=warn -jar "$jar" \
    --properties "$dir/s3proxy.properties" </dev/null >"$CLUSTER_LOGS/s3proxy.log" 2>&1 &
  remember_pid s3proxy $!
}

# --- nodes and gateways ----------------------------------------------------------------------------------------

# The environment every node and gateway shares (database, API key), as env(1) arguments.
cluster_common_env() {
  echo "AENV_CLUSTER_DATABASE_URL=jdbc:postgresql://$CLUSTER_SERVICE_ADDRESS:$CLUSTER_PG_PORT/agentenv"
  echo "AENV_CLUSTER_DATABASE_USER=agentenv"
  echo "AENV_CLUSTER_DATABASE_PASSWORD_FILE=$CLUSTER_DIR/postgres/password"
  echo "AENV_API_KEY=$CLUSTER_API_KEY"
  echo "AENV_SANDBOX_DOMAIN=$CLUSTER_DOMAIN"
}

# Starts node $1 in its network namespace (nsenter --net only: the node's overlay and loop mounts must stay in the
# host's mount namespace, where the leak checks and the next start find them).
cluster_node_up() {
  local i=$1 home env=() jvm
  home=$(node_home "$i")
  mkdir -p "$home"
  mapfile -t env < <(cluster_common_env)
  env+=(
    "AENV_HOME=$home"
    "AENV_LISTEN=$(node_address "$i"):$CLUSTER_NODE_PORT"
    "AENV_NODE_ID=n$i"
    "AENV_NODE_ADDRESS=$(node_url "$i")"
    "AENV_BACKEND=container"
    "AENV_BACKEND_ENVD_DIR=${AENV_BACKEND_ENVD_DIR:-$PWD/agentenv-envd/target}"
    "AENV_BACKEND_JDK_HOME=${AENV_BACKEND_JDK_HOME:-$JAVA_HOME}"
    "AENV_BACKEND_NAME_PREFIX=$(node_prefix "$i")"
    "AENV_BACKEND_RUN_DIR=$(node_run_dir "$i")"
    "AENV_BACKEND_CGROUP_PARENT=$(node_cgroup_parent "$i")"
    "AENV_BACKEND_FIRST_SLOT=$(( CLUSTER_FIRST_SLOT + (i - 1) * CLUSTER_SLOTS ))"
    "AENV_BACKEND_ID_PREFIX=cl$CLUSTER_TAG$i-"
    "AENV_BACKEND_MAX_SANDBOXES=${AENV_BACKEND_MAX_SANDBOXES:-$CLUSTER_SLOTS}"
    "AENV_BACKEND_POOL_SIZE=${AENV_BACKEND_POOL_SIZE:-1}"
    "AENV_VOLUME_STORAGE=directory"
    "AENV_VOLUME_SHARED_DIR=$CLUSTER_DIR/volumes"
  )
  if [[ $CLUSTER_STORE == directory ]]; then
    env+=("AENV_OBJECT_STORE_DIR=$CLUSTER_DIR/objects")
  else
    env+=(
      "AENV_OBJECT_STORE_S3_BUCKET=$CLUSTER_BUCKET"
      "AENV_OBJECT_STORE_S3_ENDPOINT=http://$CLUSTER_SERVICE_ADDRESS:$CLUSTER_S3_PORT"
      "AENV_OBJECT_STORE_S3_REGION=us-east-1"
      "AWS_ACCESS_KEY_ID=$CLUSTER_S3_KEY"
      "AWS_SECRET_ACCESS_KEY=$CLUSTER_S3_SECRET"
    )
  fi
  if [[ -n ${AENV_LOCAL_CLUSTER_NODE_JVM:-} ]]; then
    read -r -a jvm <<<"$AENV_LOCAL_CLUSTER_NODE_JVM"
  else
    mapfile -t jvm < <(server_jvm_options)
    jvm+=(-Xmx512m)
  fi
  nsenter --net="/run/netns/$(node_netns "$i")" -- env -u AENV_LOCAL_CLUSTER_NODE_JVM "${env[@]}" \
    "$JAVA_HOME/bin/java" "${jvm[@]}" -jar agentenv-server/target/agentenv-server.jar \
    </dev/null >>"$CLUSTER_LOGS/n$i.log" 2>&1 &
  remember_pid "n$i" $!
}

cluster_gateway_up() {
  local g=$1 port=$2 env=() jvm
  mapfile -t env < <(cluster_common_env)
  if [[ -n ${AENV_LOCAL_CLUSTER_GATEWAY_JVM:-} ]]; then
    read -r -a jvm <<<"$AENV_LOCAL_CLUSTER_GATEWAY_JVM"
  else
    mapfile -t jvm < <(server_jvm_options)
    jvm+=(-Xmx256m)
  fi
  env "${env[@]}" "AENV_LISTEN=127.0.0.1:$port" \
    "$JAVA_HOME/bin/java" "${jvm[@]}" -jar agentenv-server/target/agentenv-server.jar gateway \
    </dev/null >>"$CLUSTER_LOGS/g$g.log" 2>&1 &
  remember_pid "g$g" $!
}

# wait_until_answers NAME URL PIDNAME: until GET URL answers 2xx, failing when the process exits or after 3 minutes.
wait_until_answers() {
  local name=$1 url=$2 pid; pid=$(<"$CLUSTER_DIR/pids/$3")
  local deadline=$(( SECONDS + 180 ))
  until curl -fs -o /dev/null --max-time 2 "$url"; do
    kill -0 "$pid" 2>/dev/null || { cluster_log "$name exited before it answered (log: $CLUSTER_LOGS/$3.log)"; return 1; }
    (( SECONDS < deadline )) || { cluster_log "$name did not answer $url within 180 s"; return 1; }
    sleep 0.2
  done
}

wait_until_listening() {
  local name=$1 host=$2 port=$3 pid; pid=$(<"$CLUSTER_DIR/pids/$4")
  local deadline=$(( SECONDS + 120 ))
  until (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cluster_log "$name exited (log: $CLUSTER_LOGS/$4.log)"; return 1; }
    (( SECONDS < deadline )) || { cluster_log "$name did not listen on $host:$port within 120 s"; return 1; }
    sleep 0.2
  done
}

# --- start and stop --------------------------------------------------------------------------------------------

# Starts the whole cluster and writes $CLUSTER_DIR/cluster.env (what runs where), or stops what it started and fails.
cluster_start() {
  if [[ -e $CLUSTER_DIR/started ]]; then
    cluster_log "a cluster with state dir $CLUSTER_DIR was not stopped; stopping its leftovers first"
    cluster_stop
  fi
  rm -rf "$CLUSTER_DIR"
  mkdir -p "$CLUSTER_LOGS"
  chmod 755 "$CLUSTER_DIR"
  # from here on cluster_stop finds whatever exists
  echo "$CLUSTER_TAG $CLUSTER_NET" > "$CLUSTER_DIR/started"
  CLUSTER_API_KEY=${AENV_API_KEY:-e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')}
  CLUSTER_DOMAIN=${AENV_SANDBOX_DOMAIN:-localhost:${CLUSTER_GATEWAY_PORTS[0]}}
  (umask 077; echo "$CLUSTER_API_KEY" > "$CLUSTER_DIR/api-key")
  cluster_log "network: service address $CLUSTER_SERVICE_ADDRESS, node namespaces $(node_netns 1)..3"
  cluster_network_up
  cluster_log "PostgreSQL on 127.0.0.1 and $CLUSTER_SERVICE_ADDRESS:$CLUSTER_PG_PORT"
  cluster_postgres_up
  if [[ $CLUSTER_STORE == directory ]]; then
    cluster_log "shared storage: the directory $CLUSTER_DIR/objects"
    mkdir -p "$CLUSTER_DIR/objects"
  else
    cluster_log "S3Proxy on $CLUSTER_SERVICE_ADDRESS:$CLUSTER_S3_PORT (bucket $CLUSTER_BUCKET)"
    cluster_s3proxy_up
    wait_until_listening S3Proxy "$CLUSTER_SERVICE_ADDRESS" "$CLUSTER_S3_PORT" s3proxy
  fi
  local i g
  for i in "${CLUSTER_NODES[@]}"; do cluster_node_up "$i"; done
  for g in 1 2; do cluster_gateway_up "$g" "${CLUSTER_GATEWAY_PORTS[g - 1]}"; done
  for i in "${CLUSTER_NODES[@]}"; do
    wait_until_answers "node n$i" "$(node_url "$i")/health" "n$i"
    cluster_log "node n$i serves at $(node_url "$i")"
  done
  for g in 1 2; do
    wait_until_answers "gateway $g" "http://127.0.0.1:${CLUSTER_GATEWAY_PORTS[g - 1]}/health" "g$g"
  done
  {
    echo "GATEWAY_URLS=http://127.0.0.1:${CLUSTER_GATEWAY_PORTS[0]} http://127.0.0.1:${CLUSTER_GATEWAY_PORTS[1]}"
    echo "API_KEY=$CLUSTER_API_KEY"
    echo "SANDBOX_DOMAIN=$CLUSTER_DOMAIN"
    echo "NODE_URLS=$(for i in "${CLUSTER_NODES[@]}"; do printf '%s ' "$(node_url "$i")"; done)"
    echo "DATABASE_URL=postgresql://agentenv@127.0.0.1:$CLUSTER_PG_PORT/agentenv"
    echo "S3_ENDPOINT=http://$CLUSTER_SERVICE_ADDRESS:$CLUSTER_S3_PORT"
    echo "LOGS=$CLUSTER_LOGS"
  } > "$CLUSTER_DIR/cluster.env"
}

# stop_pid NAME SECONDS: SIGTERM to the process remembered as NAME, SIGKILL after SECONDS.
stop_pid() {
  local file=$CLUSTER_DIR/pids/$1 pid
  [[ -f $file ]] || return 0
  pid=$(<"$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$(( SECONDS + $2 ))
    while kill -0 "$pid" 2>/dev/null && (( SECONDS < deadline )); do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      cluster_log "$1 (pid $pid) did not stop within $2 s: killed"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$file"
}

# What a node that did not stop cleanly (kill -9) left of its sandboxes: processes in its cgroups, runc's containers,
# mounts under its data and run dirs, loop devices of its disks, its sandboxes' network namespaces, its cgroups.
reap_node_leftovers() {
  local i=$1 home run parent prefix
  home=$(node_home "$i") run=$(node_run_dir "$i") parent=$(node_cgroup_parent "$i") prefix=$(node_prefix "$i")
  local group
  for group in /sys/fs/cgroup/*/"$parent" /sys/fs/cgroup/unified/"$parent"; do
    [[ -d $group ]] || continue
    find "$group" -name freezer.state -exec sh -c 'echo THAWED > "$1"' _ {} \; 2>/dev/null || true
    find "$group" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
  done
  if [[ -d $run/runc ]]; then
    local id
    for id in $(runc --root "$run/runc" list -q 2>/dev/null); do runc --root "$run/runc" delete --force "$id" || true; done
  fi
  local point
  while read -r point; do
    umount "$point" 2>/dev/null || umount -l "$point" || true
  done < <(awk -v a="$home/" -v b="$run/" '{ p = $5; gsub(/\\040/, " ", p); if (index(p "/", a) == 1 || index(p "/", b) == 1) print p }' \
    /proc/self/mountinfo | sort -r)
  local loop
  while read -r loop; do losetup -d "$loop" || true; done < <(losetup -nO NAME,BACK-FILE 2>/dev/null |
    awk -v a="$home/" 'index($2, a) == 1 { print $1 }')
  local ns
  for ns in /run/netns/"$prefix"-n*; do [[ -e $ns ]] && ip netns delete "${ns##*/}"; done
  for group in /sys/fs/cgroup/*/"$parent" /sys/fs/cgroup/unified/"$parent"; do
    [[ -d $group ]] && find "$group" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  [[ -d $run ]] && rm -rf "$run"
  return 0
}

# Stops everything a cluster with this state dir started, in order (gateways, nodes, S3Proxy, PostgreSQL), and
# removes its namespaces, links, leftovers and data; keeps the logs.
cluster_stop() {
  local -
  set +e
  [[ -e $CLUSTER_DIR/started ]] || return 0
  local saved_tag=$CLUSTER_TAG saved_net=$CLUSTER_NET i
  # the names and addresses of the cluster that was started, whatever this run's settings are
  read -r CLUSTER_TAG CLUSTER_NET < "$CLUSTER_DIR/started"
  CLUSTER_SERVICE_ADDRESS=$CLUSTER_NET.1
  stop_pid g1 20
  stop_pid g2 20
  for i in "${CLUSTER_NODES[@]}"; do [[ -f $CLUSTER_DIR/pids/n$i ]] && kill -TERM "$(<"$CLUSTER_DIR/pids/n$i")" 2>/dev/null; done
  for i in "${CLUSTER_NODES[@]}"; do stop_pid "n$i" 90; done
  for i in "${CLUSTER_NODES[@]}"; do reap_node_leftovers "$i"; done
  stop_pid s3proxy 20
  if [[ -f $CLUSTER_DIR/postgres/data/postmaster.pid ]]; then
    as_postgres "$CLUSTER_PG_BIN/pg_ctl" -D "$CLUSTER_DIR/postgres/data" -m fast -w stop >/dev/null 2>&1 ||
      as_postgres "$CLUSTER_PG_BIN/pg_ctl" -D "$CLUSTER_DIR/postgres/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  for i in "${CLUSTER_NODES[@]}"; do
    [[ -e /run/netns/$(node_netns "$i") ]] && ip netns delete "$(node_netns "$i")"
    ip link delete "$(node_veth "$i")" 2>/dev/null
  done
  ip addr del "$CLUSTER_SERVICE_ADDRESS/32" dev lo 2>/dev/null
  nft delete table ip "$(cluster_nat_table)" 2>/dev/null
  local left
  left=$(awk -v d="$CLUSTER_DIR/" 'index($5 "/", d) == 1 { print $5 }' /proc/self/mountinfo)
  if [[ -n $left ]]; then
    cluster_log "mounts are left under $CLUSTER_DIR, which is kept: $left"
    return 1
  fi
  rm -rf "$CLUSTER_DIR/nodes" "$CLUSTER_DIR/postgres" "$CLUSTER_DIR/s3proxy" "$CLUSTER_DIR/pids" \
    "$CLUSTER_DIR/cluster.env" "$CLUSTER_DIR/api-key" "$CLUSTER_DIR/started"
  CLUSTER_TAG=$saved_tag CLUSTER_NET=$saved_net CLUSTER_SERVICE_ADDRESS=$saved_net.1
  return 0
}
