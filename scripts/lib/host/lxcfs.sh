# LXCFS: the FUSE filesystem whose /proc and /sys files every sandbox sees over its own (meminfo, cpuinfo, stat,
# uptime, loadavg, swaps, diskstats, the online CPU list), each answered for the cgroup of the process that reads it.
# Sourced by scripts/setup-host.sh; the backend binds the files (io.agentenv.backend.container.guest.LxcfsViews) and
# refuses to start while this mount does not answer.
#
# This host's own instance, not Debian's lxcfs service (which, where systemd runs, serves /var/lib/lxcfs without the
# two options below): --enable-cfs counts CPUs from the CFS quota (cpu_count), --enable-loadavg keeps load averages per
# cgroup. Started once and left running: restarting it would cut every running sandbox's views (their binds keep the
# old FUSE connection and read "Transport endpoint is not connected") until their next restore.

LXCFS_DIR=/run/agentenv/lxcfs
LXCFS_PIDFILE=/run/agentenv/lxcfs.pid

# Whether LXCFS is mounted at $LXCFS_DIR and its daemon answers a read.
lxcfs_serving() {
  findmnt -n -t fuse.lxcfs -M "$LXCFS_DIR" >/dev/null 2>&1 && head -c 1 "$LXCFS_DIR/proc/uptime" >/dev/null 2>&1
}

start_lxcfs() {
  command -v lxcfs >/dev/null || fail "lxcfs is not installed (Debian package lxcfs)"
  if lxcfs_serving; then
    note "running (pid $(cat "$LXCFS_PIDFILE" 2>/dev/null || echo '?'), $LXCFS_DIR)"
    return
  fi
  # A daemon that died leaves its mount behind, and lxcfs cannot mount over it; sandboxes still holding binds of it
  # keep them (they read ENOTCONN until their next restore) while the mount itself goes.
  if findmnt -n -M "$LXCFS_DIR" >/dev/null 2>&1; then
    echo "unmounting the dead LXCFS mount at $LXCFS_DIR"
    umount -l "$LXCFS_DIR"
  fi
  stop_lxcfs_daemon
  mkdir -p "$LXCFS_DIR"
  # In a session of its own, detached from this setup: no terminal, no inherited descriptors (fd 9 is the setup's lock,
  # which a daemon holding it would keep taken forever), its output appended to the setup's cache dir.
  setsid -f lxcfs --enable-cfs --enable-loadavg --pidfile "$LXCFS_PIDFILE" "$LXCFS_DIR" \
    </dev/null >>"$AENV_CACHE_DIR/lxcfs.log" 2>&1 9>&-
  local i
  for (( i = 0; i < 100; i++ )); do
    lxcfs_serving && break
    sleep 0.05
  done
  lxcfs_serving || fail "lxcfs did not mount $LXCFS_DIR within 5 s (see $AENV_CACHE_DIR/lxcfs.log)"
  local pid
  pid=$(cat "$LXCFS_PIDFILE")
  # Out of the OOM killer's reach, as Debian's service runs it: its death would cut every sandbox's views. Lowering
  # the score takes CAP_SYS_RESOURCE, which some hosts' root lacks (these test machines' bounding set).
  local oom="oom_score_adj -1000"
  if ! { echo -1000 > "/proc/$pid/oom_score_adj"; } 2>/dev/null; then
    oom="oom_score_adj unchanged: no CAP_SYS_RESOURCE"
    echo "lxcfs $pid: $oom"
  fi
  note "started (pid $pid, $LXCFS_DIR, $oom)"
}

# Stops the daemon the pid file names, if it is this setup's (an lxcfs serving $LXCFS_DIR), and waits up to 10 s for it
# to exit (2-7 s after SIGTERM here; it unmounts its mount itself, and a new daemon cannot take the pid file's lock
# before).
stop_lxcfs_daemon() {
  local pid i
  pid=$(cat "$LXCFS_PIDFILE" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  [[ $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) == lxcfs*" $LXCFS_DIR "* ]] || return 0
  echo "stopping the LXCFS daemon $pid"
  kill "$pid" 2>/dev/null || return 0
  for (( i = 0; i < 200; i++ )); do
    [[ -e /proc/$pid ]] || return 0
    sleep 0.05
  done
  echo "LXCFS daemon $pid did not exit within 10 s"
}

# For --undo: stops this setup's daemon; sandboxes that still run then read ENOTCONN from their views.
stop_lxcfs() {
  stop_lxcfs_daemon
  if findmnt -n -M "$LXCFS_DIR" >/dev/null 2>&1; then umount -l "$LXCFS_DIR" || true; fi
  rm -f "$LXCFS_PIDFILE"
  note "LXCFS stopped and $LXCFS_DIR unmounted"
}
