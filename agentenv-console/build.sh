#!/usr/bin/env bash
# Builds the web console into $1 (the module's target/classes/agentenv-console, which its jar holds): `npm ci` when
# node_modules does not match package-lock.json (npm's cache under /var/cache/agentenv/npm when that is writable),
# then `vite build`, then assets.txt, the list of built files the server reads. Run by Maven (generate-resources).
set -euo pipefail
cd "$(dirname "$0")"
out=${1:?usage: build.sh OUTPUT_DIR}
npm=${AENV_CONSOLE_NPM:-npm}
if [[ -z ${npm_config_cache:-} ]] && mkdir -p /var/cache/agentenv/npm 2>/dev/null && [[ -w /var/cache/agentenv/npm ]]; then
  export npm_config_cache=/var/cache/agentenv/npm
fi
stamp=node_modules/.package-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  "$npm" ci --no-audit --no-fund --prefer-offline
  echo "$want" > "$stamp"
fi
node node_modules/vite/bin/vite.js build --logLevel warn --outDir "$out" --emptyOutDir
node build/list-assets.mjs "$out"
