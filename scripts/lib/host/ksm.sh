# Kernel samepage merging (KSM) for the guest agents' memory. Every sandbox of a template is a restore of one
# checkpoint, so its envd starts with the same pages as every other; the template's envd marks its own mappings
# mergeable before that checkpoint (MADV_MERGEABLE, kept by CRIU), and ksmd then keeps one copy of each page that is
# still identical, until a sandbox writes it. The sandboxes' own programs are never marked. This starts ksmd at a
# fixed pace: AENV_KSM_PAGES pages every 20 ms (default 100, the kernel's own default: ~1 % of a CPU here, a pass over
# 20 idle sandboxes in ~40 s; ksmd's CPU grows with the pace, not with the number of sandboxes). The kernel's advisor
# is turned off: its scan-time mode ran ksmd at its highest pace here, ~36 % of a CPU, past its own CPU limit.
# AENV_KSM=off leaves KSM as the host has it (nothing merges unless something else starts ksmd); docs/security.md says
# what merging shares between sandboxes. The host's own values are remembered once, for --undo. Sourced by
# scripts/setup-host.sh.

KSM_SYSFS=/sys/kernel/mm/ksm
KSM_KEYS=(run pages_to_scan sleep_millisecs advisor_mode)

setup_ksm() {
  local state="$AENV_CACHE_DIR/host-state" key pages=${AENV_KSM_PAGES:-100}
  if [[ ${AENV_KSM:-on} == off ]]; then
    note "left as the host has it (AENV_KSM=off): run=$(cat "$KSM_SYSFS/run" 2>/dev/null || echo absent)"
    return
  fi
  [[ -w $KSM_SYSFS/run ]] || { note "this kernel has no KSM ($KSM_SYSFS): envd's pages stay private"; return; }
  [[ $pages =~ ^[0-9]+$ ]] && (( pages >= 1 )) || fail "AENV_KSM_PAGES must be a positive number of pages: $pages"
  mkdir -p "$state"
  for key in "${KSM_KEYS[@]}"; do
    [[ -f $KSM_SYSFS/$key && ! -f $state/ksm.$key.orig ]] || continue
    # advisor_mode reads as "[none] scan-time": keep the selected word
    sed -n '/\[/{s/.*\[\(.*\)\].*/\1/p;b};p' "$KSM_SYSFS/$key" > "$state/ksm.$key.orig"
  done
  if [[ -f $KSM_SYSFS/advisor_mode ]]; then
    echo none > "$KSM_SYSFS/advisor_mode" || fail "could not turn KSM's advisor off"
  fi
  echo "$pages" > "$KSM_SYSFS/pages_to_scan" || fail "could not set KSM's pages_to_scan to $pages"
  echo 20 > "$KSM_SYSFS/sleep_millisecs" || fail "could not set KSM's sleep_millisecs"
  echo 1 > "$KSM_SYSFS/run" || fail "could not start ksmd ($KSM_SYSFS/run)"
  note "ksmd running, $(<"$KSM_SYSFS/pages_to_scan") pages every $(<"$KSM_SYSFS/sleep_millisecs") ms"
}

undo_ksm() {
  local state="$AENV_CACHE_DIR/host-state" key
  # the run state last
  for key in advisor_mode pages_to_scan sleep_millisecs run; do
    if [[ -f $state/ksm.$key.orig ]]; then
      cat "$state/ksm.$key.orig" > "$KSM_SYSFS/$key" || true
      rm -f "$state/ksm.$key.orig"
    fi
  done
  note "KSM settings restored"
}
