#!/usr/bin/env bash
# Prepares this Debian 12 host to run container sandboxes; idempotent, and a few seconds when already done.
#   scripts/setup-host.sh           install/verify everything (run as root; serve and CI run it)
#   scripts/setup-host.sh --undo    remove the firewall table and forwarding change, the CRIU cache seed and the
#                                   parent cgroups, stop LXCFS; --undo --purge also deletes the caches under $AENV_CACHE_DIR
# Each step prints one line with its timing; on failure the step names what is missing and shows its log's tail.
# What it changes on the host, and how to undo it: docs/host-setup.md.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/scripts/lib/env.sh"
source "$REPO/scripts/lib/host/common.sh"
source "$REPO/scripts/lib/host/packages.sh"
source "$REPO/scripts/lib/host/checks.sh"
source "$REPO/scripts/lib/host/criu.sh"
source "$REPO/scripts/lib/host/network.sh"
source "$REPO/scripts/lib/host/limits.sh"
source "$REPO/scripts/lib/host/ksm.sh"
source "$REPO/scripts/lib/host/template.sh"
source "$REPO/scripts/lib/host/disk.sh"
source "$REPO/scripts/lib/host/lxcfs.sh"

[[ $(id -u) == 0 ]] || die "run as root: the host setup installs packages, loads firewall rules and creates cgroups"

mode=setup
for arg in "$@"; do
  case $arg in
    --undo) mode=undo ;;
    --purge) [[ $mode == undo ]] || die "--purge goes with --undo"; mode=purge ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) die "unknown argument: $arg (try --help)" ;;
  esac
done

mkdir -p "$AENV_CACHE_DIR"
STEP_LOG="$AENV_CACHE_DIR/setup-host.log"
# Keep the log bounded: the previous one is kept once it passes 4 MiB.
if [[ -f $STEP_LOG ]] && (( $(stat -c %s "$STEP_LOG") > 4 * 1024 * 1024 )); then mv -f "$STEP_LOG" "$STEP_LOG.old"; fi
STEP_NOTE=$(mktemp)
trap 'rm -f "$STEP_NOTE"' EXIT
# One setup at a time (serve and a test run may start together).
exec 9>"$AENV_CACHE_DIR/.setup.lock"
flock 9
printf '==== %s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$mode" >> "$STEP_LOG"

# Facts the Java side reads (io.agentenv.backend.container.HostLayout). Written last: its presence, with the
# current boot id in /run/agentenv/host-ready, means "this host is ready".
HOST_ENV="$AENV_CACHE_DIR/host.env"
write_host_env() {
  local memsw=0
  [[ -e $(cgroup_v1_mount memory)/memory.memsw.limit_in_bytes ]] && memsw=1
  cat > "$HOST_ENV.new" <<ENV
# Written by scripts/setup-host.sh; read by the container backend. Do not edit: rerun the setup instead.
AENV_CACHE_DIR=$AENV_CACHE_DIR
AENV_RUNC=$(command -v runc)
AENV_CRIU=$CRIU_BIN
AENV_CRIU_RUNC_CONF=$CRIU_RUNC_CONF
AENV_TEMPLATES_DIR=$AENV_CACHE_DIR/templates
AENV_RESOLV_CONF=$AENV_CACHE_DIR/resolv.conf
AENV_SANDBOX_CIDR=$SANDBOX_CIDR
AENV_NAME_PREFIX=$NAME_PREFIX
AENV_CGROUP_PARENT=agentenv
AENV_CGROUP_ROOT=/sys/fs/cgroup
AENV_SWAP_ACCOUNTING=$memsw
ENV
  mv -f "$HOST_ENV.new" "$HOST_ENV"
  mkdir -p /run/agentenv
  cat /proc/sys/kernel/random/boot_id > /run/agentenv/host-ready
  note "$HOST_ENV"
}

undo_host() {
  rm -f /run/agentenv/host-ready /run/agentenv/criu-kdat.stamp /run/criu.kdat "$HOST_ENV"
  local c mnt
  local parent
  for c in "${CGROUP_CONTROLLERS[@]}"; do
    mnt=$(cgroup_v1_mount "$c")
    for parent in agentenv agentenv-tests; do
      if [[ -n $mnt && -d $mnt/$parent ]]; then rmdir "$mnt/$parent" 2>/dev/null || true; fi
    done
  done
  note "host-ready marker, CRIU kdat cache and empty /agentenv, /agentenv-tests cgroups removed"
}

purge_cache() {
  find "$AENV_CACHE_DIR" -mindepth 1 -maxdepth 1 ! -name setup-host.log ! -name .setup.lock -exec rm -rf {} +
  note "removed $AENV_CACHE_DIR's caches (CRIU build, templates)"
}

total_start=$(now_ms)
case $mode in
  setup)
    step packages       install_packages
    step kernel-check   check_kernel
    step criu-build     build_criu
    step criu-kdat      seed_kdat
    step criu-check     check_criu
    step cgroups        prepare_cgroups
    step sandbox-disks  check_sandbox_disks
    step lxcfs          start_lxcfs
    step network        setup_network
    step limits         setup_limits
    step ksm            setup_ksm
    step template-base  build_template base "$REPO"
    step host-env       write_host_env
    ;;
  undo|purge)
    step network        undo_network
    step limits         undo_limits
    step ksm            undo_ksm
    step lxcfs          stop_lxcfs
    step host           undo_host
    [[ $mode == purge ]] && step cache purge_cache
    ;;
esac
printf '[%s] %-18s %s (%d ms)\n' "$AENV_LOG_PREFIX" "done" "$mode" $(( $(now_ms) - total_start ))
