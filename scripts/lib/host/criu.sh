# CRIU from Debian sid's source tarball (runtime-findings.md: bookworm's 3.17 cannot run on this kernel, trixie's
# 4.1.1 hangs every dump here). Built once into $AENV_CACHE_DIR/criu-<version>; $AENV_CACHE_DIR/criu links to it.
# Sourced by scripts/setup-host.sh.

CRIU_SUITE=${AENV_CRIU_SUITE:-sid}
CRIU_MIN_VERSION=4.2
CRIU_LINK="$AENV_CACHE_DIR/criu"
CRIU_BIN="$CRIU_LINK/sbin/criu"
# Options runc hands to CRIU through the org.criu.config annotation. The sandbox netns is external (created by the
# host, passed by path), so CRIU must not lock it; skipping also avoids needing iptables.
CRIU_RUNC_CONF="$AENV_CACHE_DIR/criu-runc.conf"
# Patches applied to the source before the build (criu-patches/*.patch, in order); a build records their hash, so a
# changed set of patches rebuilds CRIU.
CRIU_PATCH_DIR="$(dirname "${BASH_SOURCE[0]}")/criu-patches"

criu_patches_hash() {
  cat "$CRIU_PATCH_DIR"/*.patch 2>/dev/null | sha256sum | cut -c1-12
}

criu_usable() {
  [[ -x $CRIU_BIN ]] && "$CRIU_BIN" --version 2>/dev/null | grep -q '^Version:' \
    && [[ $(cat "$CRIU_LINK/.aenv-patches" 2>/dev/null) == "$(criu_patches_hash)" ]]
}

build_criu() {
  if criu_usable; then
    note "cached $(readlink "$CRIU_LINK") ($("$CRIU_BIN" --version | awk '/^Version:/ { print $2 }'))"
    write_criu_conf
    return
  fi
  # A build of this patch set made earlier (checkouts with different patch sets share this host): link it again
  # rather than rebuild it in place, which would remove a binary other runs are using.
  local cached hash
  hash=$(criu_patches_hash)
  for cached in "$AENV_CACHE_DIR"/criu-*-p"$hash"; do
    if [[ -x $cached/sbin/criu && $(cat "$cached/.aenv-patches" 2>/dev/null) == "$hash" ]] \
        && "$cached/sbin/criu" --version 2>/dev/null | grep -q '^Version:'; then
      ln -sfn "$(basename "$cached")" "$CRIU_LINK.new" && mv -T "$CRIU_LINK.new" "$CRIU_LINK"
      write_criu_conf
      note "linked $(basename "$cached") again (built before for this patch set)"
      return
    fi
  done
  local mirror keyring work
  mirror=$(apt_mirror_uri) || fail "no Debian mirror found in the apt configuration (/etc/apt/sources.list.d)"
  keyring=$(apt_keyring)
  work=$(mktemp -d "$AENV_CACHE_DIR/.criu-build.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT

  # A throw-away apt state that knows only sid's sources: the machine's own apt lists stay untouched.
  mkdir -p "$work/apt/sources.list.d" "$work/apt/preferences.d" "$work/apt/lists/partial" \
    "$work/apt/cache/archives/partial" "$work/src"
  : > "$work/apt/sources.list"
  cat > "$work/apt/sources.list.d/criu-src.sources" <<SRC
Types: deb-src
URIs: $mirror
Suites: $CRIU_SUITE
Components: main
Signed-By: $keyring
SRC
  local apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o "Dir::Etc::SourceParts=$work/apt/sources.list.d"
    -o "Dir::Etc::PreferencesParts=$work/apt/preferences.d" -o "Dir::State::Lists=$work/apt/lists"
    -o "Dir::Cache=$work/apt/cache" -o "APT::Sandbox::User=root" -q)
  apt-get "${apt_opts[@]}" update || fail "apt-get update for the $CRIU_SUITE deb-src entry failed"
  # Only the .orig tarball is needed (and served); Debian's packaging tarball may 404, so apt's exit code is not
  # the verdict: the tarball's hash against the signed .dsc is.
  (cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only criu) || true
  local dsc orig version expected actual
  local found
  found=("$work"/src/criu_*.dsc); dsc=${found[0]}
  found=("$work"/src/criu_*.orig.tar.*); orig=${found[0]}
  [[ -f $dsc && -f $orig ]] || fail "could not fetch CRIU's source from $CRIU_SUITE (no .dsc or .orig tarball)"
  expected=$(awk -v f="$(basename "$orig")" '/^Checksums-Sha256:/ { on = 1; next } /^[^ ]/ { on = 0 } on && $3 == f { print $1 }' "$dsc")
  actual=$(sha256sum "$orig" | cut -d' ' -f1)
  [[ -n $expected && $expected == "$actual" ]] || fail "CRIU tarball hash mismatch: $orig"
  version=$(basename "$orig"); version=${version#criu_}; version=${version%.orig.tar.*}
  dpkg --compare-versions "$version" ge "$CRIU_MIN_VERSION" || fail "$CRIU_SUITE has CRIU $version, need >= $CRIU_MIN_VERSION"

  tar -C "$work/src" -xf "$orig"
  local patches srcdir="$work/src/criu-$version"
  patches=$(criu_patches_hash)
  local prefix="$AENV_CACHE_DIR/criu-$version-p$patches" patch
  [[ -d $srcdir ]] || fail "unexpected tarball layout: no criu-$version directory"
  for patch in "$CRIU_PATCH_DIR"/*.patch; do
    [[ -f $patch ]] || continue
    patch -d "$srcdir" -p1 --quiet < "$patch" || fail "CRIU patch $(basename "$patch") does not apply to $version"
  done
  make -C "$srcdir" -j"$(nproc)" >"$work/build.log" 2>&1 || { tail -n 30 "$work/build.log"; fail "CRIU $version build failed"; }
  # Install into a staging root and rename into place: an interrupted install never looks finished.
  make -C "$srcdir" install-lib install-criu PREFIX="$prefix" DESTDIR="$work/dest" SKIP_PIP_INSTALL=1 >>"$work/build.log" 2>&1 \
    || { tail -n 30 "$work/build.log"; fail "CRIU $version install failed"; }
  printf '%s\n' "$patches" > "$work/dest$prefix/.aenv-patches"
  rm -rf "$prefix"
  mv -T "$work/dest$prefix" "$prefix"
  ln -sfn "$(basename "$prefix")" "$CRIU_LINK.new" && mv -T "$CRIU_LINK.new" "$CRIU_LINK"
  criu_usable || fail "the freshly built CRIU $version does not run"
  write_criu_conf
  note "built CRIU $version from $CRIU_SUITE into $prefix"
}

write_criu_conf() {
  local want='network-lock skip'
  [[ -f $CRIU_RUNC_CONF && $(<"$CRIU_RUNC_CONF") == "$want" ]] && return
  printf '%s\n' "$want" > "$CRIU_RUNC_CONF.new" && mv -f "$CRIU_RUNC_CONF.new" "$CRIU_RUNC_CONF"
}

# CRIU probes the kernel on every call unless /run/criu.kdat holds its feature cache, and it only writes that cache
# when /run is tmpfs (it is ext4 here). Seed it from a private mount namespace with /run on tmpfs. The cache is valid
# for one boot and one CRIU binary, which the stamp records.
seed_kdat() {
  local stamp_dir=/run/agentenv want
  want="$(cat /proc/sys/kernel/random/boot_id) $(readlink -f "$CRIU_BIN")"
  if [[ -s /run/criu.kdat && -f $stamp_dir/criu-kdat.stamp && $(<"$stamp_dir/criu-kdat.stamp") == "$want" ]]; then
    note "cached for this boot"
    return
  fi
  mkdir -p "$stamp_dir"
  # No removal first: the new cache replaces the old one atomically, so a CRIU run meanwhile (another checkout's
  # tests on this host) still finds one; without it every dump and restore probes the kernel again (~26 ms).
  # shellcheck disable=SC2016 # $1 expands in the inner shell
  unshare --mount --propagation private -- bash -c 'mount -t tmpfs tmpfs /run && "$1" check >/dev/null 2>&1; cat /run/criu.kdat' \
    _ "$CRIU_BIN" > /run/criu.kdat.new || true
  [[ -s /run/criu.kdat.new ]] || { rm -f /run/criu.kdat.new; fail "criu check wrote no kernel-feature cache"; }
  mv -f /run/criu.kdat.new /run/criu.kdat
  printf '%s\n' "$want" > "$stamp_dir/criu-kdat.stamp"
  note "seeded /run/criu.kdat"
}

check_criu() {
  local out
  local rc=0
  out=$("$CRIU_BIN" check 2>&1) || rc=$?
  if (( rc != 0 )); then
    printf '%s\n' "$out"
    fail "CRIU cannot checkpoint on this kernel: '$CRIU_BIN check' exited $rc: $(tail -n1 <<<"${out:-no output}")"
  fi
  grep -q 'Looks good' <<<"$out" || { printf '%s\n' "$out"; fail "criu check did not say 'Looks good': $(tail -n1 <<<"$out")"; }
  note "$("$CRIU_BIN" --version | awk '/^Version:/ { print "CRIU " $2 }'): looks good"
}
