# Builds a template root filesystem from its recipe under templates/<name>/ with debootstrap, into
# $AENV_CACHE_DIR/templates/<name>/<recipe-hash>/rootfs. The hash of the recipe files (and of this builder) decides:
# an existing build is reused, a changed recipe gets a new directory. Builds happen in .build-<hash> and are renamed
# into place when complete, so an interrupted build never looks finished. <name>/current points at the latest build.
# Sourced by scripts/setup-host.sh.

TEMPLATE_BUILDER="${BASH_SOURCE[0]}"

template_hash() {
  local name=$1 root=$2
  {
    (cd "$root" && find "templates/$name" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    sha256sum < "$TEMPLATE_BUILDER"
  } | sha256sum | cut -c1-16
}

# Reads KEY=value lines (no shell evaluation) from the recipe.
recipe_value() {
  awk -F= -v k="$2" '$1 == k { sub(/^[^=]*=/, ""); print; exit }' "$1"
}

build_template() {
  local name=$1 repo=$2
  local recipe="$repo/templates/$name" hash dir
  [[ -f $recipe/recipe.env && -f $recipe/packages.txt && -f $recipe/customize.sh ]] \
    || fail "template recipe $recipe is incomplete (recipe.env, packages.txt, customize.sh)"
  hash=$(template_hash "$name" "$repo")
  dir="$AENV_CACHE_DIR/templates/$name"
  if [[ -d $dir/$hash/rootfs && -f $dir/$hash/manifest.json ]]; then
    link_current "$dir" "$hash"
    note "cached $name/$hash"
    return
  fi
  mkdir -p "$dir"
  rm -rf "$dir"/.build-*   # leftovers of interrupted builds (the setup lock is held, so none is in progress)

  local suite variant components mirror packages build="$dir/.build-$hash"
  suite=$(recipe_value "$recipe/recipe.env" SUITE)
  variant=$(recipe_value "$recipe/recipe.env" VARIANT)
  components=$(recipe_value "$recipe/recipe.env" COMPONENTS)
  [[ -n $suite && -n $variant && -n $components ]] || fail "recipe.env needs SUITE, VARIANT and COMPONENTS"
  mirror=$(apt_mirror_uri "$suite") || mirror=$(apt_mirror_uri) || fail "no Debian mirror in the apt configuration"
  packages=$(grep -v -e '^#' -e '^[[:space:]]*$' "$recipe/packages.txt" | paste -sd, -)

  mkdir -p "$build"
  debootstrap --variant="$variant" --components="$components" --include="$packages" \
    --keyring="$(apt_keyring)" "$suite" "$build/rootfs" "$mirror" \
    || { tail -n 20 "$build/rootfs/debootstrap/debootstrap.log" 2>/dev/null; fail "debootstrap of $suite failed"; }

  # apt inside the template uses the same mirrors the host uses (updates and security included when configured).
  local keyring security
  keyring=$(apt_keyring)
  security=$(apt_mirror_uri "$suite-security" || true)
  rm -f "$build/rootfs/etc/apt/sources.list"
  {
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: %s\nSigned-By: %s\n' \
      "$mirror" "$suite" "$suite" "$components" "$keyring"
    [[ -n $security ]] && printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: %s\nSigned-By: %s\n' \
      "$security" "$suite" "$components" "$keyring"
  } > "$build/rootfs/etc/apt/sources.list.d/debian.sources"
  cp /etc/resolv.conf "$build/rootfs/etc/resolv.conf"   # only while customizing; emptied below
  install -m 0755 "$recipe/customize.sh" "$build/rootfs/customize.sh"
  # A private mount namespace: the /proc mount vanishes with it, whatever happens.
  unshare --mount --propagation private -- bash -c 'mount -t proc proc "$1/proc" && chroot "$1" /customize.sh' _ "$build/rootfs" \
    || fail "customize.sh failed inside the $name template"
  rm -f "$build/rootfs/customize.sh"
  : > "$build/rootfs/etc/resolv.conf"   # each sandbox gets the host's reachable resolvers through a bind mount

  local pkgcount size
  pkgcount=$(chroot "$build/rootfs" dpkg-query -W -f='.\n' | wc -l)
  size=$(du -sm "$build/rootfs" | cut -f1)
  printf '{"name":"%s","recipeHash":"%s","suite":"%s","variant":"%s","packages":%d,"sizeMB":%d,"builtAt":"%s"}\n' \
    "$name" "$hash" "$suite" "$variant" "$pkgcount" "$size" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$build/manifest.json"
  rm -rf "${dir:?}/$hash"
  mv -T "$build" "$dir/$hash"
  link_current "$dir" "$hash"
  note "built $name/$hash ($pkgcount packages, ${size} MB)"
}

link_current() {
  local dir=$1 hash=$2
  [[ $(readlink "$dir/current" 2>/dev/null) == "$hash" ]] && return
  ln -sfn "$hash" "$dir/current.new" && mv -T "$dir/current.new" "$dir/current"
}
