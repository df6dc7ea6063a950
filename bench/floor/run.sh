#!/usr/bin/env bash
# Our stack and the floor in one run, so the tables compare numbers taken minutes apart on one machine state:
#   1. the floor: raw runc + CRIU (with `sleep`, and with envd as the workload), Debian's crun 1.8.1 and podman 4.3.1
#      doing the same operations (bench/floor/floor.sh)
#   2. our stack through the npm e2b SDK, server and proxy (bench/container/sdk.mjs)
#   3. our backend alone, through the SPI (bench/container/run.sh <n> 2: warm pool of 2, as the SDK run)
# Run as root from anywhere:
#   bench/floor/run.sh [iterations]          (default 30; FLOOR_SKIP_BUILD=1 uses the jars already built)
# Prints the machine, date and load average before each part, every part's lines, then the floor as a markdown
# table (bench/floor/table.awk). Raw outputs stay in the directory printed at the end.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
source scripts/lib/env.sh
N=${1:-30}
[[ $EUID -eq 0 ]] || { echo "run as root (containers, mounts, network namespaces)" >&2; exit 1; }
[[ $N =~ ^[0-9]+$ ]] && (( N >= 1 )) || { echo "iterations must be a positive number: $N" >&2; exit 2; }
scripts/setup-host.sh >/dev/null
if [[ -z ${FLOOR_SKIP_BUILD:-} ]]; then
  mvn -B -q -DskipTests -pl agentenv-server,agentenv-envd -am package
fi
out=$(mktemp -d /tmp/agentenv-floor-run.XXXXXX)

machine() {
  echo "== $1: $(date -u +%Y-%m-%dT%H:%M:%SZ); load average $(cut -d' ' -f1-3 /proc/loadavg);" \
    "$(nproc) vCPU $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(free -g | awk '/Mem:/ {print $2}') GiB;" \
    "kernel $(uname -r); runc $(runc --version | awk 'NR==1 {print $3}'), CRIU $(basename "$(readlink -f "$(dirname "$(dirname "$(awk -F= '/^AENV_CRIU=/ {print $2}' /var/cache/agentenv/host.env)")")")")"
}

# Every part runs even when an earlier one failed; the exit status says whether all of them succeeded.
failed=()
machine "floor (raw runtimes)" | tee "$out/floor.txt"
FLOOR_TSV="$out/floor.tsv" bench/floor/floor.sh "$N" runc runc-envd crun podman 2>&1 | tee -a "$out/floor.txt" || failed+=(floor)
machine "our stack through the e2b SDK" | tee "$out/sdk.txt"
node bench/container/sdk.mjs "$N" 2>&1 | tee -a "$out/sdk.txt" || failed+=(sdk)
machine "our backend through the SPI (warm pool 2)" | tee "$out/spi.txt"
bench/container/run.sh "$N" 2 2>&1 | tee -a "$out/spi.txt" || failed+=(spi)
echo
[[ -s $out/floor.tsv ]] && awk -f bench/floor/table.awk "$out/floor.tsv"
echo "raw outputs: $out"
if (( ${#failed[@]} )); then echo "failed parts: ${failed[*]} (see their output above)" >&2; exit 1; fi
