#!/usr/bin/env bash
# Prints, one a line, the server's JVM options (agentenv-server/jvm.options without comments and blank lines) that the
# JVM at $1 accepts, for scripts/serve.sh. The server needs Java 25 or newer: an older JVM fails here with a message
# that says so. jvm.options holds experimental HotSpot options of JDK 25 (-XX:+AOTCompileEagerly after
# -XX:+UnlockExperimentalVMOptions) that another JDK may not have, and a JVM given an option it does not know refuses to
# start: each option this JVM rejects is left out with a warning on stderr (the server then only warms up slower; an
# AOT cache recorded with other options is not used, the JVM says so and runs without it).
# Usage: server-jvm-options.sh <java> <jvm.options>
set -euo pipefail
java=$1 file=$2
[[ -x $java ]] || { echo "server-jvm-options.sh: no java at $java" >&2; exit 1; }
[[ -r $file ]] || { echo "server-jvm-options.sh: cannot read $file" >&2; exit 1; }

options=()
while IFS= read -r line || [[ -n $line ]]; do
  line=${line#"${line%%[![:space:]]*}"} line=${line%"${line##*[![:space:]]}"}
  [[ -z $line || $line == \#* ]] || options+=("$line")
done <"$file"

# one JVM start when all is well: the options and the version together
version_of() { sed -n 's/^ *java\.specification\.version = //p'; }
accepted=0
if settings=$("$java" "${options[@]}" -XshowSettings:properties -version 2>&1); then
  accepted=1 version=$(version_of <<<"$settings")
else
  version=$("$java" -XshowSettings:properties -version 2>&1 | version_of)
fi
if [[ ! $version =~ ^[0-9]+$ ]] || ((version < 25)); then
  echo "the server needs Java 25 or newer (it is built and tested with Temurin 25); $java is Java ${version:-of unknown version}: set AENV_JAVA_HOME to a JDK 25" >&2
  exit 1
fi
if ((accepted)); then
  printf '%s\n' "${options[@]}"
  exit 0
fi
accepts() { "$java" "$@" -version >/dev/null 2>&1; }
unlock=-XX:+UnlockExperimentalVMOptions
kept=()
for option in "${options[@]}"; do
  [[ $option == "$unlock" ]] && continue
  if accepts "$unlock" "$option"; then
    kept+=("$option")
  else
    echo "warning: $java does not accept the JVM option $option (agentenv-server/jvm.options, made for Temurin 25): the server starts without it" >&2
  fi
done
# the unlock goes first, and only while an option it unlocks is kept
if [[ " ${options[*]} " == *" $unlock "* ]] && ! accepts "${kept[@]}" && accepts "$unlock" "${kept[@]}"; then
  kept=("$unlock" "${kept[@]}")
fi
if ! accepts "${kept[@]}"; then
  echo "the JVM at $java refuses the server's options even without the ones it rejects alone:" >&2
  "$java" "${kept[@]}" -version >&2 || true
  exit 1
fi
printf '%s\n' "${kept[@]}"
