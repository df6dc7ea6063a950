# Sourced by scripts/test.sh and scripts/cluster.sh: Debian's PostgreSQL 15 binaries, which the store's tests and the
# local cluster run as servers of their own. The package gets no cluster of its own (nothing for its service to start).
ensure_postgres() {
  [[ -x /usr/lib/postgresql/15/bin/postgres ]] && return 0
  mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = off" > /etc/postgresql-common/createcluster.d/agentenv-no-main-cluster.conf
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
}
