# Debian packages the host needs. Sourced by scripts/setup-host.sh.

# Run time: the OCI runtime, rootfs builder, netns/veth, firewall/NAT, mount and namespace tools, mkfs.ext4 (sandbox disks),
# and the shared libraries the CRIU build links against (pulled in by the -dev packages below).
# Images (agentenv-images): skopeo (registry protocol) and umoci (layer unpacking); its host tests also run a local
# docker-registry, build test images from busybox-static and write bcrypt htpasswd entries with apache2-utils.
# envd's guest runtime (container backend): tini's static build and busybox-static, beside envd in every sandbox so that
# images without them (musl, distroless, no shell) run envd; musl-tools builds the musl test image of the e2e suite.
# lxcfs: every sandbox's /proc/meminfo, cpuinfo, stat, uptime, ... (scripts/lib/host/lxcfs.sh).
HOST_PACKAGES=(acl lxcfs runc debootstrap debian-archive-keyring iproute2 nftables util-linux e2fsprogs procps kmod xz-utils ca-certificates
  skopeo umoci docker-registry busybox-static apache2-utils tini musl-tools)
# Build dependencies of CRIU (bookworm's versions; runtime-findings.md, "Debian-only path").
CRIU_BUILD_DEPS=(build-essential pkg-config libprotobuf-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
  libnl-3-dev libnet1-dev libcap-dev libbsd-dev libgnutls28-dev libnftables-dev uuid-dev)

missing_packages() {
  local p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || printf '%s\n' "$p"
  done
}

install_packages() {
  local missing
  mapfile -t missing < <(missing_packages "${HOST_PACKAGES[@]}" "${CRIU_BUILD_DEPS[@]}")
  if (( ${#missing[@]} == 0 )); then
    note "all $(( ${#HOST_PACKAGES[@]} + ${#CRIU_BUILD_DEPS[@]} )) present"
    return
  fi
  apt-get update -q || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || fail "apt-get install failed for: ${missing[*]}"
  note "installed ${#missing[@]}: ${missing[*]}"
}
