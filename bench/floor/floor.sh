#!/usr/bin/env bash
# The floor: the container backend's operations done by hand on raw runc (Debian's runc + the cached CRIU), on crun
# (Debian 12's crun 1.8.1, which has no CRIU) and on podman (Debian's podman 4.3.1 on runc), with the same `base`
# template rootfs on overlayfs and the same limits (1 CPU, 512 MiB without swap, 1024 pids). Timed with EPOCHREALTIME
# around the CLI calls (what a user scripting the runtime pays). Needs root and scripts/setup-host.sh.
#   bench/floor/floor.sh [iterations] [runtime...]     (default 30; runc runc-envd crun podman)
# The workload is `sleep` under `sh` (the floor of each step). `runc-envd` repeats runc's CRIU steps with the
# backend's own workload instead: tini + this repo's envd on the read-only JDK (agentenv-envd/target must be built),
# so checkpoint and restore move the same process tree and memory as our sandboxes do.
# Prints one line per operation and appends "runtime<TAB>operation<TAB>n<TAB>p50<TAB>p95<TAB>max" to $FLOOR_TSV
# when set. Installs podman and crun only when missing. Everything it creates (containers, overlay mounts, netns,
# cgroups, podman's image and containers, work dirs) is named flb-*/agentenv-floor* and removed on exit, also on
# failure; the exit status is non-zero if anything was left behind.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
N=${1:-30}
shift || true
RUNTIMES=("$@")
(( ${#RUNTIMES[@]} )) || RUNTIMES=(runc runc-envd crun podman)
[[ $EUID -eq 0 ]] || { echo "run as root (containers, mounts, network namespaces)" >&2; exit 1; }
[[ $N =~ ^[0-9]+$ ]] && (( N >= 1 )) || { echo "iterations must be a positive number: $N" >&2; exit 2; }

HOST_ENV=/var/cache/agentenv/host.env
[[ -r $HOST_ENV ]] || { echo "$HOST_ENV missing: run scripts/setup-host.sh first" >&2; exit 1; }
# shellcheck disable=SC1090
source "$HOST_ENV"
TPL=$(readlink -f "$AENV_TEMPLATES_DIR/base/current/rootfs")
[[ -x $TPL/bin/sleep ]] || { echo "template rootfs missing under $AENV_TEMPLATES_DIR/base (serve once or run the backend tests)" >&2; exit 1; }
CRIU=$AENV_CRIU
CRIU_CONF=$AENV_CRIU_RUNC_CONF

W=/run/agentenv-floor            # bundles, overlay dirs, images; one run at a time
CG=agentenv-floor                # cgroup parent (all v1 controllers)
PFX=flb                          # netns, container and podman names
WORKLOAD=sleep                   # or envd (runtime runc-envd)
JDK=${AENV_BACKEND_JDK_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
ENVD_DIST=$root/agentenv-envd/target
IMAGE=localhost/agentenv-floor-base
RUNC=(runc --root "$W/runc-state" --criu "$CRIU")
CRUN=(crun --root "$W/crun-state")
PODMAN=(podman --runtime runc --cgroup-manager cgroupfs --events-backend file)
CAPS='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_FSETID","CAP_KILL","CAP_SETGID","CAP_SETUID","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT"]'

if [[ -z ${FLOOR_INNER:-} ]]; then
  exec 8>/run/agentenv-floor.lock
  flock -n 8 || { echo "another floor benchmark is running" >&2; exit 1; }
fi

ensure_packages() {
  local missing=()
  command -v podman >/dev/null || missing+=(podman)
  command -v crun >/dev/null || missing+=(crun)
  if (( ${#missing[@]} )); then
    echo "installing ${missing[*]} (Debian packages)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# ---- measurement functions---------------------------------------------------------------------------------------
now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }
declare -a SAMPLES=()
# record <start_us>: appends the elapsed milliseconds (3 decimals) since start to SAMPLES
record() { local d=$(( $(now_us) - $1 )); SAMPLES+=("$(( d / 1000 )).$(printf '%03d' $(( d % 1000 )))"); }
# report <runtime> <operation>: p50/p95 by nearest rank (as bench/container/sdk.mjs), then clears SAMPLES
report() {
  local rt=$1 what=$2 sorted n p50 p95 max
  mapfile -t sorted < <(printf '%s\n' "${SAMPLES[@]}" | sort -g)
  n=${#sorted[@]}
  p50=${sorted[$(( (n * 50 + 99) / 100 - 1 ))]}
  p95=${sorted[$(( (n * 95 + 99) / 100 - 1 ))]}
  max=${sorted[$(( n - 1 ))]}
  printf '%-9s %-62s n=%3d  p50 %8.1f ms  p95 %8.1f ms  max %8.1f ms\n' "$rt" "$what" "$n" "$p50" "$p95" "$max"
  [[ -z ${FLOOR_TSV:-} ]] || printf '%s\t%s\t%d\t%.1f\t%.1f\t%.1f\n' "$rt" "$what" "$n" "$p50" "$p95" "$max" >> "$FLOOR_TSV"
  SAMPLES=()
}
skip() { printf '%-9s %-62s %s\n' "$1" "$2" "$3"; [[ -z ${FLOOR_TSV:-} ]] || printf '%s\t%s\t-\t-\t-\t%s\n' "$1" "$2" "$3" >> "$FLOOR_TSV"; }
# quiet <command...>: runs it without stdio; on failure shows its stderr and, for CRIU steps, the end of CRIU's log
# (a detached container's init inherits the runtime's stdio, so run/restore get /dev/null for stderr too: CRIU
# cannot dump a host file outside the container's mounts)
quiet() {
  local err="$W/last.err" a prev="" log
  for a in "$@"; do [[ $a == run || $a == restore ]] && err=/dev/null; done
  "$@" </dev/null >/dev/null 2>"$err" && return 0
  echo "failed: $*" >&2
  [[ $err == /dev/null ]] || tail -5 "$err" >&2
  for a in "$@"; do
    if [[ $prev == --work-path ]]; then for log in "$a"/*.log; do [[ -f $log ]] && cp "$log" "/tmp/agentenv-floor-$(basename "$log")"; grep -m3 "Error" "$log" >&2; tail -3 "$log" >&2; done; fi
    prev=$a
  done
  return 1
}

# ---- raw OCI bundles (runc and crun) ---------------------------------------------------------------------------
# netns <name>: a network namespace with loopback up (pre-created, as the backend's pool does, so never timed)
netns() { ip netns add "$1"; ip -n "$1" link set lo up; }
# bundle <dir> <id> <netns> [extra lower]: upper/work/rootfs dirs and config.json (runc's defaults with the backend's
# lean mounts, capabilities, limits and CRIU config; generated before the clock starts, as the backend does in memory)
bundle() {
  local dir=$1 id=$2 ns=$3 args mounts
  mkdir -p "$dir/upper" "$dir/work" "$dir/rootfs" "$dir/envd"
  if [[ $WORKLOAD == envd ]]; then # as SandboxSpecs.build: tini, envd on the JDK bound read-only, its socket dir rw
    args=$(jq -cn --arg java "$JDK/bin/java" --arg dist /opt/agentenv-envd '["/usr/bin/tini", "-s", "--", "/bin/sh", "-c",
      "exec \"$0\" \"$@\" >>/var/log/agentenv-envd.log 2>&1", $java, "@\($dist)/jvm.options",
      "-XX:AOTCache=\($dist)/envd.aot", "-jar", "\($dist)/agentenv-envd.jar", "--port", "49983",
      "--unix-socket", "/run/envd/envd.sock"]')
    mounts=$(jq -cn --arg jdk "$JDK" --arg dist "$W/envd-dist" --arg sock "$dir/envd" '[
      {destination: $jdk, type: "bind", source: $jdk, options: ["rbind", "ro", "nosuid", "nodev"]},
      {destination: "/opt/agentenv-envd", type: "bind", source: $dist, options: ["rbind", "ro", "nosuid", "nodev"]},
      {destination: "/run/envd", type: "bind", source: $sock, options: ["rbind", "rw", "nosuid", "nodev", "noexec"]}]')
  else
    args='["/bin/sh", "-c", "exec </dev/null >/dev/null 2>&1; exec sleep infinity"]'
    mounts='[]'
  fi
  jq --argjson args "$args" --argjson extra "$mounts" --arg root "$dir/rootfs" --arg cg "/$CG/$id" --arg ns "/run/netns/$ns" --arg conf "$CRIU_CONF" --argjson caps "$CAPS" '
      .process.terminal = false
    | .process.args = $args
    | .process.env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"]
    | .mounts += $extra
    | .process.rlimits = [{type: "RLIMIT_NOFILE", hard: 16384, soft: 16384}]
    | .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps, inheritable: [], ambient: []}
    | .process.noNewPrivileges = false
    | .root = {path: $root, readonly: false}
    | .hostname = "sandbox"
    | .linux.namespaces = [{type: "pid"}, {type: "ipc"}, {type: "uts"}, {type: "mount"}, {type: "network", path: $ns}]
    | .linux.cgroupsPath = $cg
    | .linux.resources = {devices: [{allow: false, type: "a", access: "rwm"}],
        memory: {limit: 536870912, swap: 536870912}, cpu: {quota: 100000, period: 100000}, pids: {limit: 1024}}
    | .annotations = {"org.criu.config": $conf}' "$W/spec.json" > "$dir/config.json"
}
# ready <dir>: the workload is up (envd: its unix socket exists; sleep: at once)
ready() {
  [[ $WORKLOAD == envd ]] || return 0
  local i
  for (( i = 0; i < 600; i++ )); do [[ -S $1/envd/envd.sock ]] && return 0; sleep 0.05; done
  echo "envd did not start within 30 s in $1" >&2; return 1
}
overlay() { mount -t overlay overlay -o "lowerdir=$2,upperdir=$1/upper,workdir=$1/work" "$1/rootfs"; }
# drop <runtime-array-name> <id> <dir>: delete the container, unmount, remove the dir
drop() {
  local -n rt=$1
  "${rt[@]}" delete -f "$2" >/dev/null 2>&1 || true
  if mountpoint -q "$3/rootfs"; then umount "$3/rootfs"; fi
  rm -rf "$3"
}

bench_bundle_runtime() { # <label> <runtime array name> <with CRIU: yes|no>
  local label=$1 rtname=$2 criu=$3
  local -n rt=$2
  local i t0 d c="$W/$label-c" cid="$PFX-$label-c"
  netns "$PFX-$label-a"; netns "$PFX-$label-b"

  if [[ $WORKLOAD == envd ]]; then
    bundle "$c" "$cid" "$PFX-$label-a"; overlay "$c" "$TPL"; quiet "${rt[@]}" run -d --bundle "$c" "$cid"; ready "$c"
  else
  for (( i = 0; i < 3 + N; i++ )); do # time to interactive; 3 warm-up rounds
    d="$W/$label-tti"; bundle "$d" "$PFX-$label-tti" "$PFX-$label-a"
    t0=$(now_us)
    overlay "$d" "$TPL"
    quiet "${rt[@]}" run -d --bundle "$d" "$PFX-$label-tti"
    quiet "${rt[@]}" exec "$PFX-$label-tti" true
    (( i < 3 )) || record "$t0"
    drop "$rtname" "$PFX-$label-tti" "$d"
  done
  report "$label" "time to interactive (overlay + run -d + exec true)"

  bundle "$c" "$cid" "$PFX-$label-a"; overlay "$c" "$TPL"; quiet "${rt[@]}" run -d --bundle "$c" "$cid"
  for (( i = 0; i < 10; i++ )); do quiet "${rt[@]}" exec "$cid" true; done
  for (( i = 0; i < (N > 100 ? N : 100); i++ )); do t0=$(now_us); quiet "${rt[@]}" exec "$cid" true; record "$t0"; done
  report "$label" "exec true on a running container"

  local -a resume=()
  for (( i = 0; i < N; i++ )); do
    t0=$(now_us); quiet "${rt[@]}" pause "$cid"; record "$t0"
    t0=$(now_us); quiet "${rt[@]}" resume "$cid"; resume+=("$(( $(now_us) - t0 ))")
  done
  report "$label" "pause (cgroup freezer, in place)"
  for d in "${resume[@]}"; do SAMPLES+=("$(( d / 1000 )).$(printf '%03d' $(( d % 1000 )))"); done
  report "$label" "resume (cgroup freezer thaw)"
  fi

  if [[ $criu != yes ]]; then
    skip "$label" "pause with memory (checkpoint to disk + stop)" "n/a: built without CRIU"
    skip "$label" "resume with memory (restore + exec true)" "n/a: built without CRIU"
    skip "$label" "snapshot (pause, copy upper, checkpoint leave-running, resume)" "n/a: built without CRIU"
    skip "$label" "fork x1 (layered overlay + restore + exec true)" "n/a: built without CRIU"
    drop "$rtname" "$cid" "$c"
    ip netns del "$PFX-$label-a"; ip netns del "$PFX-$label-b"
    return
  fi

  resume=()
  for (( i = 0; i < N; i++ )); do
    rm -rf "$c/img" "$c/ck" "$c/rs"
    t0=$(now_us); quiet "${rt[@]}" checkpoint --image-path "$c/img" --work-path "$c/ck" "$cid"; record "$t0"
    t0=$(now_us)
    quiet "${rt[@]}" restore -d --bundle "$c" --image-path "$c/img" --work-path "$c/rs" "$cid"
    quiet "${rt[@]}" exec "$cid" true
    resume+=("$(( $(now_us) - t0 ))")
  done
  report "$label" "pause with memory (checkpoint to disk + stop)"
  for d in "${resume[@]}"; do SAMPLES+=("$(( d / 1000 )).$(printf '%03d' $(( d % 1000 )))"); done
  report "$label" "resume with memory (restore + exec true)"

  local snaps=$(( N / 3 > 5 ? N / 3 : 5 )) s f fid="$PFX-$label-f"
  local -a fork=()
  for (( i = 0; i < snaps; i++ )); do
    s="$W/$label-snap"; rm -rf "$s"; mkdir -p "$s"
    t0=$(now_us)
    quiet "${rt[@]}" pause "$cid"
    cp -a "$c/upper" "$s/upper"
    quiet "${rt[@]}" checkpoint --leave-running --image-path "$s/img" --work-path "$s/ck" "$cid"
    quiet "${rt[@]}" resume "$cid"
    record "$t0"
    f="$W/$label-f"; bundle "$f" "$fid" "$PFX-$label-b"
    t0=$(now_us)
    overlay "$f" "$s/upper:$TPL"
    quiet "${rt[@]}" restore -d --bundle "$f" --image-path "$s/img" --work-path "$f/rs" "$fid"
    quiet "${rt[@]}" exec "$fid" true
    fork+=("$(( $(now_us) - t0 ))")
    drop "$rtname" "$fid" "$f"
  done
  report "$label" "snapshot (pause, copy upper, checkpoint leave-running, resume)"
  for d in "${fork[@]}"; do SAMPLES+=("$(( d / 1000 )).$(printf '%03d' $(( d % 1000 )))"); done
  report "$label" "fork x1 (layered overlay + restore + exec true)"
  rm -rf "$s"
  drop "$rtname" "$cid" "$c"
  ip netns del "$PFX-$label-a"; ip netns del "$PFX-$label-b"
}

# ---- podman ----------------------------------------------------------------------------------------------------
PODMAN_RUN=(run -d --network none --ulimit nofile=16384:16384 --ulimit nproc=4096:4096 --cgroup-parent "/$CG-podman"
  --memory 512m --memory-swap 512m --cpus 1 --pids-limit 1024 --cap-drop all
  --cap-add CHOWN,DAC_OVERRIDE,FOWNER,FSETID,KILL,SETGID,SETUID,SETPCAP,NET_BIND_SERVICE,SYS_CHROOT
  --annotation "org.criu.config=$CRIU_CONF")

bench_podman() {
  local i t0 d cid="$PFX-podman-c"
  mkdir -p "$W"
  # the template as a podman image (podman stores it on its own overlay storage; imported once per run, untimed)
  tar -C "$TPL" -c . | "${PODMAN[@]}" import - "$IMAGE" >/dev/null 2>"$W/last.err" || { tail -5 "$W/last.err" >&2; return 1; }
  for (( i = 0; i < 3 + N; i++ )); do
    t0=$(now_us)
    quiet "${PODMAN[@]}" "${PODMAN_RUN[@]}" --name "$PFX-podman-tti" "$IMAGE" sleep infinity
    quiet "${PODMAN[@]}" exec "$PFX-podman-tti" true
    (( i < 3 )) || record "$t0"
    quiet "${PODMAN[@]}" rm -f -t 0 "$PFX-podman-tti"
  done
  report podman "time to interactive (run -d + exec true)"

  quiet "${PODMAN[@]}" "${PODMAN_RUN[@]}" --name "$cid" "$IMAGE" sleep infinity
  for (( i = 0; i < 10; i++ )); do quiet "${PODMAN[@]}" exec "$cid" true; done
  for (( i = 0; i < (N > 100 ? N : 100); i++ )); do t0=$(now_us); quiet "${PODMAN[@]}" exec "$cid" true; record "$t0"; done
  report podman "exec true on a running container"

  local -a resume=()
  for (( i = 0; i < N; i++ )); do
    t0=$(now_us); quiet "${PODMAN[@]}" pause "$cid"; record "$t0"
    t0=$(now_us); quiet "${PODMAN[@]}" unpause "$cid"; resume+=("$(( $(now_us) - t0 ))")
  done
  report podman "pause (cgroup freezer, in place)"
  for d in "${resume[@]}"; do SAMPLES+=("$(( d / 1000 )).$(printf '%03d' $(( d % 1000 )))"); done
  report podman "resume (cgroup freezer thaw)"

  resume=()
  for (( i = 0; i < N; i++ )); do
    t0=$(now_us); quiet "${PODMAN[@]}" container checkpoint "$cid"; record "$t0"
    t0=$(now_us)
    quiet "${PODMAN[@]}" container restore "$cid"
    quiet "${PODMAN[@]}" exec "$cid" true
    resume+=("$(( $(now_us) - t0 ))")
  done
  report podman "pause with memory (checkpoint to disk + stop)"
  for d in "${resume[@]}"; do SAMPLES+=("$(( d / 1000 )).$(printf '%03d' $(( d % 1000 )))"); done
  report podman "resume with memory (restore + exec true)"

  local snaps=$(( N / 3 > 5 ? N / 3 : 5 )) fid="$PFX-podman-f" tarball="$W/podman-snap.tar"
  local -a fork=()
  for (( i = 0; i < snaps; i++ )); do
    rm -f "$tarball"
    t0=$(now_us)
    quiet "${PODMAN[@]}" container checkpoint --leave-running --export "$tarball" --compress none "$cid"
    record "$t0"
    t0=$(now_us)
    quiet "${PODMAN[@]}" container restore --import "$tarball" --name "$fid"
    quiet "${PODMAN[@]}" exec "$fid" true
    fork+=("$(( $(now_us) - t0 ))")
    quiet "${PODMAN[@]}" rm -f -t 0 "$fid"
  done
  report podman "snapshot (checkpoint --leave-running --export, uncompressed)"
  for d in "${fork[@]}"; do SAMPLES+=("$(( d / 1000 )).$(printf '%03d' $(( d % 1000 )))"); done
  report podman "fork x1 (restore --import as a new container + exec true)"
  rm -f "$tarball"
  quiet "${PODMAN[@]}" rm -f -t 0 "$cid"
}

# ---- cleanup and leak check ------------------------------------------------------------------------------------
cleanup() {
  local id m ns c dir
  if command -v runc >/dev/null; then
    for id in $("${RUNC[@]}" list -q 2>/dev/null); do [[ $id == "$PFX"-* ]] && "${RUNC[@]}" delete -f "$id" >/dev/null 2>&1; done
  fi
  if command -v crun >/dev/null; then
    for id in $("${CRUN[@]}" list -q 2>/dev/null); do [[ $id == "$PFX"-* ]] && "${CRUN[@]}" delete -f "$id" >/dev/null 2>&1; done
  fi
  if command -v podman >/dev/null; then
    for id in $("${PODMAN[@]}" ps -a --format '{{.Names}}' 2>/dev/null); do
      [[ $id == "$PFX"-* ]] && "${PODMAN[@]}" rm -f -t 0 "$id" >/dev/null 2>&1
    done
    "${PODMAN[@]}" rmi -f "$IMAGE" >/dev/null 2>&1 || true
  fi
  while read -r m; do umount -l "$m" 2>/dev/null || true; done < <(awk -v w="$W/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r)
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do [[ $ns == "$PFX"-* ]] && ip netns del "$ns"; done
  for c in /sys/fs/cgroup/*/"$CG" /sys/fs/cgroup/*/"$CG-podman"; do
    [[ -d $c ]] || continue
    find "$c" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$c" 2>/dev/null || true
  done
  rm -rf "$W"
  if [[ ${HUGETLB_MOUNTED:-} == 1 ]]; then umount /sys/fs/cgroup/hugetlb && rmdir /sys/fs/cgroup/hugetlb; fi
}
leftovers() {
  local found=0 c
  if awk -v w="$W/" 'index($5, w) == 1' /proc/self/mountinfo | grep -q .; then echo "left: mounts under $W" >&2; found=1; fi
  if ip netns list 2>/dev/null | awk '{print $1}' | grep -q "^$PFX-"; then echo "left: netns $PFX-*" >&2; found=1; fi
  for c in /sys/fs/cgroup/*/"$CG" /sys/fs/cgroup/*/"$CG-podman"; do [[ -d $c ]] && { echo "left: cgroup $c" >&2; found=1; }; done
  if command -v podman >/dev/null && "${PODMAN[@]}" ps -a --format '{{.Names}}' | grep -q "^$PFX-"; then echo "left: podman containers" >&2; found=1; fi
  if pgrep -f "$W/" >/dev/null; then echo "left: processes under $W" >&2; found=1; fi
  [[ -e $W ]] && { echo "left: $W" >&2; found=1; }
  return $found
}
finish() {
  local rc=$?
  cleanup
  if leftovers; then echo "floor: nothing left behind (containers, mounts, netns, cgroups, podman image, $W)" >&2
  else rc=1; fi
  exit $rc
}

ensure_packages
cleanup # a previous run that was killed with -9
trap finish EXIT
trap 'exit 130' INT TERM
mkdir -p "$W"
(cd "$W" && runc spec && mv config.json spec.json)
export PATH="$(dirname "$CRIU"):$PATH" # podman's runc and its CRIU version check find the cached CRIU 4.2.1

for runtime in "${RUNTIMES[@]}"; do
  case $runtime in
    runc) bench_bundle_runtime runc RUNC yes ;;
    runc-envd)
      [[ -f $ENVD_DIST/agentenv-envd.jar && -f $ENVD_DIST/envd.aot ]] \
        || { echo "runc-envd needs envd built (mvn -B -q -pl agentenv-envd -am package -DskipTests)" >&2; exit 1; }
      # a private copy, as the backend makes one (a rebuild of agentenv-envd/target must not pull the files away
      # from a running JVM: CRIU cannot dump a deleted mapped file of that size)
      rm -rf "$W/envd-dist"; mkdir -p "$W/envd-dist"
      cp -a "$ENVD_DIST"/{agentenv-envd.jar,jvm.options,envd.aot} "$W/envd-dist/"
      WORKLOAD=envd bench_bundle_runtime runc-envd RUNC yes ;;
    crun)
      # Debian's crun 1.8.1 refuses hybrid cgroups while cgroup2 still owns hugetlb; it runs in a private mount
      # namespace with hugetlb on its own v1 mount there (the host's mounts, and runc's view, stay as they are).
      if grep -qw hugetlb /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null; then
        unshare -m --propagation private env FLOOR_INNER=crun "$0" "$N" crun-inner
        mkdir -p "$W"
        for (( i = 0; i < 300; i++ )); do # the kernel frees the unmounted v1 hierarchy once its last task is gone (seconds)
          grep -qw hugetlb /sys/fs/cgroup/unified/cgroup.controllers && break
          sleep 0.1
        done
        grep -qw hugetlb /sys/fs/cgroup/unified/cgroup.controllers \
          || echo "warning: hugetlb had not returned to cgroup2 30 s after the crun run" >&2
      else
        bench_bundle_runtime crun CRUN no
      fi ;;
    crun-inner)
      [[ ${FLOOR_INNER:-} == crun ]] || { echo "crun-inner is internal" >&2; exit 2; }
      mkdir /sys/fs/cgroup/hugetlb && mount -t cgroup -o hugetlb cgroup /sys/fs/cgroup/hugetlb && HUGETLB_MOUNTED=1
      mkdir -p "$W"
      bench_bundle_runtime crun CRUN no ;;
    podman) bench_podman ;;
    *) echo "unknown runtime: $runtime (runc, crun, podman)" >&2; exit 2 ;;
  esac
done
