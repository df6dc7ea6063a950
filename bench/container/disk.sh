#!/usr/bin/env bash
# What a sandbox's own disk costs (SandboxDisks): the same commands and options the backend runs, N times on a
# scratch dir under /var/tmp: make (sparse file + mkfs.ext4), mount -o loop, unmount. Prints wall time per step and
# the CPU time (user + sys) of the commands, which does not depend on the machine's load, plus the host disk a fresh
# disk takes. Run as root:  bash bench/container/disk.sh [iterations] [size MiB]
set -euo pipefail
n=${1:-20}
size=${2:-10240}
[[ $(id -u) == 0 ]] || { echo "run as root (mount)" >&2; exit 1; }
dir=$(mktemp -d /var/tmp/aenv-disk-bench-XXXXXX)
trap 'mountpoint -q "$dir/disk" && umount "$dir/disk"; rm -rf "$dir"' EXIT
mkdir -p "$dir/disk"
now_us() { local t=${EPOCHREALTIME/./}; echo "$t"; }
# Cumulative CPU of waited-for children in ms into $cpu, from bash's `times` (its second line: children's user and
# sys, e.g. "0m0.254s 0m0.227s"), parsed with builtins only so that no extra child is counted.
cpu=0
ms=0
to_ms() { local v=${1%s} m s; m=${v%%m*}; s=${v#*m}; s=${s/./}; ms=$(( m * 60000 + 10#$s )); }
child_cpu() {
  local line
  { times; } > "$dir/times"
  { read -r line; read -r line; } < "$dir/times"
  to_ms "${line%% *}"; cpu=$ms
  to_ms "${line##* }"; cpu=$(( cpu + ms ))
}
make_ms=0 mount_ms=0 umount_ms=0 make_cpu=0 mount_cpu=0 umount_cpu=0 used_kib=0
for ((i = 0; i < n; i++)); do
  rm -f "$dir/disk.img"
  child_cpu; c0=$cpu; t0=$(now_us)
  truncate -s "${size}M" "$dir/disk.img"
  mkfs.ext4 -q -F -m 0 -O ^has_journal -E lazy_itable_init=1,nodiscard -L aenv-disk "$dir/disk.img"
  child_cpu; c1=$cpu; t1=$(now_us)
  mount -t ext4 -o loop,noinit_itable,discard "$dir/disk.img" "$dir/disk"
  child_cpu; c2=$cpu; t2=$(now_us)
  mkdir "$dir/disk/upper" "$dir/disk/work"
  used_kib=$(du -k "$dir/disk.img" | cut -f1)
  child_cpu; c3=$cpu; t3=$(now_us)
  umount "$dir/disk"
  child_cpu; c4=$cpu; t4=$(now_us)
  make_ms=$((make_ms + t1 - t0)); mount_ms=$((mount_ms + t2 - t1)); umount_ms=$((umount_ms + t4 - t3))
  make_cpu=$((make_cpu + c1 - c0)); mount_cpu=$((mount_cpu + c2 - c1)); umount_cpu=$((umount_cpu + c4 - c3))
done
printf 'sandbox disk of %d MiB, n=%d, load average %s\n' "$size" "$n" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  make (truncate + mkfs.ext4)  wall %6.1f ms  cpu %6.1f ms\n' "$(bc -l <<< "$make_ms / $n / 1000")" "$(bc -l <<< "$make_cpu / $n")"
printf '  mount -o loop                wall %6.1f ms  cpu %6.1f ms\n' "$(bc -l <<< "$mount_ms / $n / 1000")" "$(bc -l <<< "$mount_cpu / $n")"
printf '  umount                       wall %6.1f ms  cpu %6.1f ms\n' "$(bc -l <<< "$umount_ms / $n / 1000")" "$(bc -l <<< "$umount_cpu / $n")"
printf '  host disk of a fresh disk    %d KiB\n' "$used_kib"
