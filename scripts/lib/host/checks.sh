# Can this kernel run sandboxes? Each check names exactly what is missing. Sourced by scripts/setup-host.sh.

CGROUP_CONTROLLERS=(cpu cpuacct cpuset memory pids freezer devices)

# Mount point of a cgroup v1 controller, empty when it is not mounted.
cgroup_v1_mount() {
  awk -v c="$1" '$3 == "cgroup" { n = split($4, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) { print $2; exit } }' /proc/self/mounts
}

check_kernel() {
  local problems=() c
  [[ $(id -u) == 0 ]] || problems+=("not running as root")
  if ! grep -qw overlay /proc/filesystems; then
    modprobe overlay 2>/dev/null || true
    grep -qw overlay /proc/filesystems || problems+=("no overlayfs in the kernel (CONFIG_OVERLAY_FS)")
  fi
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    problems+=("pure cgroup v2 host: this backend drives cgroup v1 controllers (${CGROUP_CONTROLLERS[*]})")
  else
    for c in "${CGROUP_CONTROLLERS[@]}"; do
      [[ -n $(cgroup_v1_mount "$c") ]] || problems+=("no cgroup v1 controller '$c' mounted")
    done
  fi
  [[ -e /proc/self/ns/net && -e /proc/self/ns/pid && -e /proc/self/ns/mnt ]] || problems+=("no namespace support in /proc/self/ns")
  grep -q '^Seccomp:' /proc/self/status || problems+=("no seccomp in the kernel (CONFIG_SECCOMP)")
  [[ -r /proc/sys/kernel/seccomp/actions_avail ]] && ! grep -qw errno /proc/sys/kernel/seccomp/actions_avail \
    && problems+=("seccomp cannot return errno")
  runc --version 2>/dev/null | grep -q libseccomp || problems+=("runc missing or built without libseccomp")
  # veth pairs in a network namespace (the netns pool's building block). Probes of interrupted runs are removed first.
  local stale
  for stale in /run/netns/aenv-probe-*; do [[ -e $stale ]] && ip netns delete "${stale##*/}"; done
  local probe="aenv-probe-$$"
  if ip netns add "$probe" 2>/dev/null; then
    ip -n "$probe" link add name probe0 type veth peer name probe1 2>/dev/null || problems+=("cannot create veth pairs (CONFIG_VETH)")
    ip netns delete "$probe"
  else
    problems+=("cannot create network namespaces (ip netns add)")
  fi
  if (( ${#problems[@]} )); then
    printf 'missing: %s\n' "${problems[@]}"
    local joined
    joined=$(printf '%s; ' "${problems[@]}")
    fail "this host cannot run sandboxes: ${joined%; }"
  fi
  local memsw="no swap accounting"
  [[ -e $(cgroup_v1_mount memory)/memory.memsw.limit_in_bytes ]] && memsw="swap accounting"
  note "overlayfs, cgroup v1 (${CGROUP_CONTROLLERS[*]}; $memsw), netns+veth, seccomp"
}

# Parent cgroups for every sandbox: /<controller>/agentenv. runc creates /agentenv/<id> below them; the reaper looks
# there for leftovers. cpuset children start empty in v1, so the parent copies its cpus and mems from the root.
prepare_cgroups() {
  local c mnt created=0
  for c in "${CGROUP_CONTROLLERS[@]}"; do
    mnt=$(cgroup_v1_mount "$c")
    [[ -d $mnt/agentenv ]] && continue
    mkdir "$mnt/agentenv"
    created=$((created + 1))
  done
  mnt=$(cgroup_v1_mount cpuset)
  [[ -s $mnt/agentenv/cpuset.cpus ]] || cat "$mnt/cpuset.cpus" > "$mnt/agentenv/cpuset.cpus"
  [[ -s $mnt/agentenv/cpuset.mems ]] || cat "$mnt/cpuset.mems" > "$mnt/agentenv/cpuset.mems"
  if (( created )); then note "created /agentenv in $created controllers"; else note "present"; fi
}
