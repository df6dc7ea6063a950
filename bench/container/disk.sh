#!/usr/bin/env bash
# What a sandbox's own disk costs (SandboxDisks): the same commands and options the backend runs, N times on a
# scratch dir under /var/tmp: make (sparse file + mkfs.ext4), mount -o loop, unmount. Prints wall time per step and
# the CPU time (user + sys) of the commands, which does not depend on the machine's load, plus the host disk a fresh
# disk takes. Also: the step a new disk costs once a spare image is ready (SpareDisks: a rename of a pre-made image,
# then the mount), and, per iteration, what a pause pays for the disk after a sandbox wrote to it (syncfs of the disk,
# then its unmount) and the write throughput inside (64 MiB written and fdatasync'ed; 2,000 small files untarred).
# Run as root:
#   bash bench/container/disk.sh [iterations] [size MiB] [journal: no (the backend's) | yes | both]
# `both` runs every step once without and once with an ext4 journal and prints both. The journal is made the cheapest
# way for a sparse image: default size (64 MiB for a 10 GiB disk), lazy_journal_init=1 (not zeroed: the file's holes
# read as zeros anyway), so it takes no host disk until written.
set -euo pipefail
n=${1:-20}
size=${2:-10240}
journal=${3:-no}
[[ $(id -u) == 0 ]] || { echo "run as root (mount)" >&2; exit 1; }
case $journal in no|yes|both) ;; *) echo "journal must be no, yes or both: $journal" >&2; exit 2 ;; esac
dir=$(mktemp -d /var/tmp/aenv-disk-bench-XXXXXX)
trap 'mountpoint -q "$dir/disk" && umount "$dir/disk"; rm -rf "$dir"' EXIT
mkdir -p "$dir/disk" "$dir/files"
# the small-file workload: 2,000 files of 1-4 KiB in 20 dirs, as one tarball (one process to write them all)
for d in $(seq 1 20); do
  mkdir -p "$dir/files/d$d"
  for f in $(seq 1 100); do head -c $(( (f % 4 + 1) * 1024 )) /dev/urandom > "$dir/files/d$d/f$f"; done
done
tar -C "$dir/files" -cf "$dir/files.tar" .
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
avg() { bc -l <<< "$1 / $n${2:+ / $2}"; }

run() { # $1: no|yes
  local features=^has_journal extended=lazy_itable_init=1,nodiscard
  [[ $1 == yes ]] && features=has_journal extended=lazy_itable_init=1,lazy_journal_init=1,nodiscard
  local make_ms=0 mount_ms=0 umount_ms=0 make_cpu=0 mount_cpu=0 umount_cpu=0 used_kib=0
  local take_ms=0 take_cpu=0 sync_ms=0 pause_umount_ms=0 dd_ms=0 tar_ms=0 tar_cpu=0
  for ((i = 0; i < n; i++)); do
    rm -f "$dir/disk.img" "$dir/spare.img"
    child_cpu; c0=$cpu; t0=$(now_us)
    truncate -s "${size}M" "$dir/disk.img"
    mkfs.ext4 -q -F -m 0 -O "$features" -E "$extended" -L aenv-disk "$dir/disk.img"
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
    # a spare: made ahead (not timed), then taken: rename + mount + upper/work
    truncate -s "${size}M" "$dir/spare.img"
    mkfs.ext4 -q -F -m 0 -O "$features" -E "$extended" -L aenv-disk "$dir/spare.img"
    rm -f "$dir/disk.img"
    child_cpu; c5=$cpu; t5=$(now_us)
    mv "$dir/spare.img" "$dir/disk.img"
    mount -t ext4 -o loop,noinit_itable,discard "$dir/disk.img" "$dir/disk"
    mkdir "$dir/disk/upper" "$dir/disk/work"
    child_cpu; c6=$cpu; t6=$(now_us)
    take_ms=$((take_ms + t6 - t5)); take_cpu=$((take_cpu + c6 - c5))
    # what a sandbox writes, then what pause pays for the disk: syncfs, unmount
    dd if=/dev/zero of="$dir/disk/upper/big" bs=1M count=64 conv=fdatasync status=none
    child_cpu; c7=$cpu; t7=$(now_us)
    tar -C "$dir/disk/upper" -xf "$dir/files.tar"
    child_cpu; c8=$cpu; t8=$(now_us)
    sync -f "$dir/disk/upper"
    t9=$(now_us)
    umount "$dir/disk"
    t10=$(now_us)
    dd_ms=$((dd_ms + t7 - t6)); tar_ms=$((tar_ms + t8 - t7)); tar_cpu=$((tar_cpu + c8 - c7))
    sync_ms=$((sync_ms + t9 - t8)); pause_umount_ms=$((pause_umount_ms + t10 - t9))
  done
  local label="without a journal (-O ^has_journal, the backend's)"
  [[ $1 == yes ]] && label="with a journal (-O has_journal -E lazy_journal_init=1)"
  printf 'sandbox disk of %d MiB %s, n=%d, load average %s\n' "$size" "$label" "$n" "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '  make (truncate + mkfs.ext4)       wall %6.1f ms  cpu %6.1f ms\n' "$(avg "$make_ms" 1000)" "$(avg "$make_cpu")"
  printf '  mount -o loop                     wall %6.1f ms  cpu %6.1f ms\n' "$(avg "$mount_ms" 1000)" "$(avg "$mount_cpu")"
  printf '  umount (fresh disk)               wall %6.1f ms  cpu %6.1f ms\n' "$(avg "$umount_ms" 1000)" "$(avg "$umount_cpu")"
  printf '  new disk from a spare (mv + mount + mkdir)  wall %6.1f ms  cpu %6.1f ms\n' "$(avg "$take_ms" 1000)" "$(avg "$take_cpu")"
  printf '  host disk of a fresh disk         %d KiB\n' "$used_kib"
  printf '  write 64 MiB + fdatasync          wall %6.1f ms  (%.0f MiB/s)\n' "$(avg "$dd_ms" 1000)" "$(bc -l <<< "64 * 1000000 * $n / $dd_ms")"
  printf '  untar 2,000 small files           wall %6.1f ms  cpu %6.1f ms\n' "$(avg "$tar_ms" 1000)" "$(avg "$tar_cpu")"
  printf '  pause: syncfs of the disk         wall %6.1f ms\n' "$(avg "$sync_ms" 1000)"
  printf '  pause: umount after the writes    wall %6.1f ms\n' "$(avg "$pause_umount_ms" 1000)"
}

case $journal in
  both) run no; run yes ;;
  *) run "$journal" ;;
esac
