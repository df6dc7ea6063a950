# Host-wide kernel limits that sandboxes share. The kernel counts inotify instances and watches per user namespace and
# uid, and charges each count to every namespace above as well, under the uid that made the namespace: every
# sandbox's user namespace is made by root, so all sandboxes together count against host root's limit. The backend
# gives each sandbox's namespace a limit of its own (OciSpecs.NETWORK_HOOK: 128 instances, 65536 watches per uid), and
# this raises the host's so that those fit many times over and one sandbox cannot use up what the others and the
# host need. The host's own values are remembered once, for --undo. Sourced by scripts/setup-host.sh.

HOST_INOTIFY_INSTANCES=262144
HOST_INOTIFY_WATCHES=4194304

setup_limits() {
  local state="$AENV_CACHE_DIR/host-state" key want now
  mkdir -p "$state"
  for key in max_user_instances max_user_watches; do
    [[ $key == max_user_instances ]] && want=$HOST_INOTIFY_INSTANCES || want=$HOST_INOTIFY_WATCHES
    [[ -f $state/inotify.$key.orig ]] || cat "/proc/sys/fs/inotify/$key" > "$state/inotify.$key.orig"
    now=$(<"/proc/sys/fs/inotify/$key")
    (( now >= want )) || sysctl -qw "fs.inotify.$key=$want" || fail "could not raise fs.inotify.$key to $want"
  done
  note "fs.inotify.max_user_instances=$(</proc/sys/fs/inotify/max_user_instances)" \
    "max_user_watches=$(</proc/sys/fs/inotify/max_user_watches)"
}

undo_limits() {
  local state="$AENV_CACHE_DIR/host-state" key
  for key in max_user_instances max_user_watches; do
    if [[ -f $state/inotify.$key.orig ]]; then
      sysctl -qw "fs.inotify.$key=$(<"$state/inotify.$key.orig")"
      rm -f "$state/inotify.$key.orig"
    fi
  done
  note "fs.inotify limits restored"
}
