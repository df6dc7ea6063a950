#!/bin/bash
# Runs inside the freshly debootstrapped root filesystem (chroot, private mount namespace, /proc mounted),
# as root, once per build of the `base` template.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

# No daemon may start while packages are configured inside the chroot.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod 0755 /usr/sbin/policy-rc.d

# Security updates on top of the release's packages (debootstrap only knows the release suite).
apt-get update -q
apt-get -y -q -o Dpkg::Options::=--force-confold upgrade

# Packages whose dependencies debootstrap cannot resolve (virtual packages), installed by apt's resolver instead.
apt-get -y -q --no-install-recommends install npm

# The default user, like E2B's: uid/gid 1000, home /home/user, bash, passwordless sudo.
groupadd --gid 1000 user
useradd --uid 1000 --gid 1000 --create-home --home-dir /home/user --shell /bin/bash user
printf 'user ALL=(ALL:ALL) NOPASSWD: ALL\n' > /etc/sudoers.d/90-user
chmod 0440 /etc/sudoers.d/90-user
visudo -cf /etc/sudoers.d/90-user >/dev/null

# Every SDK command is a login shell (`bash -l -c <cmd>`), which reads /etc/profile: let it take the user id from the
# shell ($EUID in bash, zsh and ksh) instead of forking and running `id -u` on every command (about a millisecond
# each); shells without EUID (dash, busybox sh) still run `id -u`. PATH, PS1 and profile.d behave as before.
sed -i 's/"$(id -u)"/"${EUID:-$(id -u)}"/g' /etc/profile
if grep -q '$(id -u)" -eq 0' /etc/profile || ! grep -q 'EUID:-$(id -u)' /etc/profile; then
  echo "customize.sh: /etc/profile no longer has the expected id -u test" >&2
  exit 1
fi

printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > /etc/hosts
printf 'sandbox\n' > /etc/hostname

# Smaller and reproducible: no package lists, caches or build logs in the template.
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old /var/lib/dpkg/*-old \
  /var/log/apt/* /var/log/dpkg.log /var/log/bootstrap.log /var/log/alternatives.log
find /tmp /var/tmp -mindepth 1 -delete
rm -f /usr/sbin/policy-rc.d
