# Sandbox disks: every sandbox writes to its own sparse ext4 image, loop-mounted by the backend (SandboxDisks), so its
# disk size is a real limit (ENOSPC inside, `df /` shows it). This step proves the host can do that: loop devices,
# ext4 and mkfs.ext4, with the very options the backend uses, on a trial image under the cache dir. A shared XFS or
# ext4 filesystem with project quotas would be the other way; this kernel has neither XFS quota (CONFIG_XFS_QUOTA)
# nor ext4's quota formats (CONFIG_QFMT_V2), see docs/host-setup.md ("Sandbox disks"). Sourced by scripts/setup-host.sh.

check_sandbox_disks() {
  local trial="$AENV_CACHE_DIR/disk-check" problems=()
  [[ -e /dev/loop-control ]] || modprobe loop 2>/dev/null || true
  [[ -e /dev/loop-control ]] || problems+=("no loop devices (/dev/loop-control; CONFIG_BLK_DEV_LOOP)")
  grep -qw ext4 /proc/filesystems || problems+=("no ext4 in the kernel")
  command -v mkfs.ext4 >/dev/null || problems+=("no mkfs.ext4 (e2fsprogs)")
  if (( ${#problems[@]} )); then
    local joined; joined=$(printf '%s; ' "${problems[@]}")
    fail "sandbox disks cannot be made: ${joined%; }"
  fi
  # A previous run interrupted between mount and umount leaves the trial mounted.
  if mountpoint -q "$trial/mnt"; then umount "$trial/mnt"; fi
  rm -rf "$trial"
  mkdir -p "$trial/mnt"
  truncate -s 1G "$trial/disk.img"
  mkfs.ext4 -q -F -m 0 -O ^has_journal -E lazy_itable_init=1,nodiscard -L aenv-disk "$trial/disk.img" \
    || fail "mkfs.ext4 failed on a trial image ($trial/disk.img)"
  mount -t ext4 -o loop,noinit_itable,discard "$trial/disk.img" "$trial/mnt" \
    || fail "cannot loop-mount an ext4 image (mount -o loop $trial/disk.img)"
  local size
  size=$(df --output=size -B1M "$trial/mnt" | tail -n 1 | tr -d ' ')
  umount "$trial/mnt"
  rm -rf "$trial"
  (( size > 900 )) || fail "a 1024 MiB trial disk shows only ${size} MiB"
  note "loop + ext4 per-sandbox disks work (1024 MiB trial disk: ${size} MiB usable)"
}
