# Sandbox egress: IPv4 forwarding plus one nftables table, "ip agentenv", that holds every rule this project adds
# (the backend adds one chain per sandbox with egress rules, named egress-<host veth>, and its entry in map "egress")
# (find it with `nft list table ip agentenv`, remove it with `nft delete table ip agentenv`).
# Sourced by scripts/setup-host.sh.

# Sandbox addressing: slot N of the netns pool owns the /30 at SANDBOX_CIDR + 4N (host end .1, sandbox end .2).
SANDBOX_CIDR=${AENV_SANDBOX_CIDR:-10.200.0.0/16}
# Every netns and host-side veth the pool creates starts with this; the rules below match interfaces by it.
NAME_PREFIX=${AENV_NAME_PREFIX:-aenv}
# The host ends of a local cluster's node links (scripts/lib/cluster.sh: acl<tag><node>); the host forwards their
# traffic like its sandboxes'.
LOCAL_CLUSTER_LINKS=acl
# Ranges sandboxes may never reach (besides each other and this host): private, shared, link-local, loopback,
# multicast and reserved space. The host's own directly connected subnets are added at run time.
INTERNAL_RANGES=(0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.168.0.0/16
  224.0.0.0/4 240.0.0.0/4)

# Resolvers from the host's resolv.conf that a sandbox can reach through NAT (loopback stubs cannot be).
host_resolvers() {
  awk '$1 == "nameserver" && $2 ~ /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/ && $2 !~ /^127\./ { print $2 }' /etc/resolv.conf 2>/dev/null
}

# sandbox_ruleset PREFIX CIDR INTERNAL RESOLVERS [FOREIGN]: the nftables batch of table "ip agentenv" for sandboxes
# whose host-side veths start with PREFIX and whose addresses are in CIDR, in whichever network namespace it is applied
# (the host's here; a local cluster's node namespace, scripts/lib/cluster.sh): INTERNAL and RESOLVERS are
# comma-separated address lists (RESOLVERS may be empty), FOREIGN an optional last forward rule. Declared with "add"
# and refilled with "flush" in one transaction: a rerun updates the rules in place and keeps what the backend added at
# run time (the egress map and the per-sandbox egress-* chains).
sandbox_ruleset() {
  local prefix=$1 cidr=$2 internal=$3 resolvers=$4 foreign=${5:-}
  cat <<NFT
add table ip agentenv { comment "agentenv: sandbox egress and isolation, see docs/host-setup.md"; }
add set ip agentenv resolvers { type ipv4_addr; }
flush set ip agentenv resolvers
${resolvers:+add element ip agentenv resolvers { $resolvers \}}
add set ip agentenv internal { type ipv4_addr; flags interval; auto-merge; }
flush set ip agentenv internal
add element ip agentenv internal { $internal }
add map ip agentenv egress { type ifname : verdict; comment "host veth -> jump to that sandbox's egress chain (filled by the backend)"; }
add chain ip agentenv forward { type filter hook forward priority filter; policy accept; }
flush chain ip agentenv forward
add rule ip agentenv forward iifname "$prefix*" oifname "$prefix*" drop comment "sandboxes never reach each other"
add rule ip agentenv forward oifname "$prefix*" ct state established,related accept
add rule ip agentenv forward oifname "$prefix*" drop comment "no unsolicited traffic into sandboxes"
add rule ip agentenv forward iifname "$prefix*" ip daddr @resolvers meta l4proto { tcp, udp } th dport 53 accept comment "DNS"
add rule ip agentenv forward iifname "$prefix*" ip daddr @internal drop comment "no internal ranges"
add rule ip agentenv forward iifname "$prefix*" iifname vmap @egress comment "per-sandbox allowOut/denyOut/internet access"
add rule ip agentenv forward iifname "$prefix*" accept
${foreign:+add rule ip agentenv forward $foreign}
add chain ip agentenv input { type filter hook input priority filter; policy accept; }
flush chain ip agentenv input
add rule ip agentenv input iifname "$prefix*" ct state established,related accept
add rule ip agentenv input iifname "$prefix*" drop comment "sandboxes never reach the host's services"
add chain ip agentenv postrouting { type nat hook postrouting priority srcnat; policy accept; }
flush chain ip agentenv postrouting
add rule ip agentenv postrouting ip saddr $cidr oifname != "$prefix*" masquerade
NFT
}

setup_network() {
  local state="$AENV_CACHE_DIR/host-state"
  mkdir -p "$state"
  # Remember the host's own setting once, so --undo can restore it and so forwarding that this setup switched on
  # is used for sandboxes only.
  [[ -f $state/ip_forward.orig ]] || cat /proc/sys/net/ipv4/ip_forward > "$state/ip_forward.orig"
  [[ $(</proc/sys/net/ipv4/ip_forward) == 1 ]] || sysctl -qw net.ipv4.ip_forward=1

  local resolvers connected
  mapfile -t resolvers < <(host_resolvers)
  # Directly connected host subnets, except the sandboxes' own /30 links.
  mapfile -t connected < <(ip -4 -o route show scope link | awk -v p="$NAME_PREFIX" '{ for (i = 1; i < NF; i++) if ($i == "dev" && index($(i + 1), p) != 1) print $1 }' | grep -v '^default' || true)

  local internal resolver_set="" foreign_forward=""
  internal=$(IFS=,; echo "${INTERNAL_RANGES[*]}${connected:+,}${connected[*]}")
  if (( ${#resolvers[@]} )); then
    resolver_set=$(IFS=,; echo "${resolvers[*]}")
  fi
  # Forwarding was off before this project turned it on: keep the host from routing anyone else's traffic (but for
  # its sandboxes and the nodes of a local cluster, scripts/lib/cluster.sh, whose links are $LOCAL_CLUSTER_LINKS*).
  if [[ $(<"$state/ip_forward.orig") == 0 ]]; then
    foreign_forward="iifname != \"$NAME_PREFIX*\" oifname != \"$NAME_PREFIX*\""
    foreign_forward+=" iifname != \"$LOCAL_CLUSTER_LINKS*\" oifname != \"$LOCAL_CLUSTER_LINKS*\" drop"
  fi

  local rules="$state/agentenv.nft"
  { echo "# Written by scripts/setup-host.sh (AgentENV sandbox egress). Applied atomically on every run."
    sandbox_ruleset "$NAME_PREFIX" "$SANDBOX_CIDR" "$internal" "$resolver_set" "$foreign_forward"; } > "$rules.new"
  nft -f "$rules.new" || fail "nftables rejected the sandbox ruleset ($rules.new)"
  mv -f "$rules.new" "$rules"

  # The resolv.conf every sandbox gets (bind-mounted read-only by the backend). Running and paused sandboxes and every
  # checkpoint name this file's inode: a new file would leave them all unrestorable (CRIU finds their mount's source
  # deleted), so it is made once and later changed in place, only when the resolvers changed.
  local resolv="$AENV_CACHE_DIR/resolv.conf" wanted r
  wanted=$(echo "# Written by scripts/setup-host.sh from the host's reachable resolvers."
    for r in "${resolvers[@]}"; do echo "nameserver $r"; done)
  if [[ ! -f $resolv ]]; then
    printf '%s\n' "$wanted" > "$resolv.new"
    mv -f "$resolv.new" "$resolv"
  elif [[ $(<"$resolv") != "$wanted" ]]; then
    printf '%s\n' "$wanted" > "$resolv"
  fi

  local dns="DNS via ${resolver_set:-none (no non-loopback resolver on the host)}"
  note "ip_forward=1, nft table 'ip agentenv' (NAT for $SANDBOX_CIDR, $dns)"
}

undo_network() {
  local state="$AENV_CACHE_DIR/host-state"
  nft delete table ip agentenv 2>/dev/null || true
  if [[ -f $state/ip_forward.orig ]]; then
    sysctl -qw net.ipv4.ip_forward="$(<"$state/ip_forward.orig")"
    rm -f "$state/ip_forward.orig"
  fi
  note "nft table removed, ip_forward restored"
}
