// Benchmark lanes: a run claims one of 8 lanes and names everything it creates on the host after it (netns/veth
// prefix, runc state dir, cgroup parent, container id prefix, network slot range), so two runs at once, of the same
// script or of different ones, never share or reap each other's sandboxes. A lock file per lane under
// /run/agentenv/bench-lanes, held with flock(1) by a child process for as long as this process lives (its stdin is a
// pipe from us: when we exit, however we exit, the pipe closes, the child ends and the lock is released).
//
// This is the only implementation: bash scripts (bench/container/run.sh) run `node bench/lib/lane.mjs hold`, which
// claims a lane, prints its number on stdout and holds it until its own stdin closes (exit status 1 and the reason on
// stderr when every lane is taken).
import { spawn } from 'node:child_process'
import { mkdirSync, realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export const LANES = 8
// AENV_BENCH_LANE_DIR only for this module's own test
export const LANE_DIR = process.env.AENV_BENCH_LANE_DIR ?? '/run/agentenv/bench-lanes'

/**
 * Each script's names and slot block per lane. Slot blocks of all lanes of all users on one host are disjoint: the
 * host's server 0-1023, capacity 2048-8191, the server's host tests 8192-8223, bench/container/run.sh (ContainerBench)
 * 9216-9727, sdk 10240-10751, pause 10752-10879, the console's terminal 10880-11007, the template benches
 * 11008-11135, the scale bench 11136-12159, the e2e suites from 12288, the cluster benches' three nodes 14464-15231
 * (e2e/tests/bench-lanes.test.mjs checks).
 */
export const LAYOUTS = Object.freeze({
  sdk: Object.freeze({ tag: 'q', name: 'sdk', id: 'sdk', firstSlot: 10240, slots: 64 }),
  pause: Object.freeze({ tag: 'p', name: 'pause', id: 'pse', firstSlot: 10752, slots: 16 }),
  capacity: Object.freeze({ tag: 'c', name: 'capacity', id: 'cap', firstSlot: 2048, slots: 768 }),
  exec: Object.freeze({ tag: 'x', name: 'exec', id: 'exec', firstSlot: 14336, slots: 16 }),
  console: Object.freeze({ tag: 'e', name: 'console', id: 'con', firstSlot: 10880, slots: 16 }),
  templates: Object.freeze({ tag: 'm', name: 'templates', id: 'tpl', firstSlot: 11008, slots: 16 }),
  scale: Object.freeze({ tag: 'g', name: 'scale', id: 'scl', firstSlot: 11136, slots: 128 }),
  clusterNodeA: Object.freeze({ tag: 'r', name: 'cluster-a', id: 'cla', firstSlot: 14464, slots: 32 }),
  clusterNodeB: Object.freeze({ tag: 's', name: 'cluster-b', id: 'clb', firstSlot: 14720, slots: 32 }),
  clusterNodeC: Object.freeze({ tag: 't', name: 'cluster-c', id: 'clc', firstSlot: 14976, slots: 32 }),
})

/** Claims the first free lane (0..7) for the rest of this process's life; throws when all are taken. */
export async function claimLane() {
  mkdirSync(LANE_DIR, { recursive: true })
  for (let lane = 0; lane < LANES; lane++) {
    const holder = spawn('flock', ['-n', `${LANE_DIR}/${lane}.lock`, 'sh', '-c', 'echo claimed; exec cat >/dev/null'],
      { stdio: ['pipe', 'pipe', 'inherit'] })
    const claimed = await new Promise((resolve, reject) => {
      holder.once('error', reject)
      holder.stdout.once('data', () => resolve(true))
      holder.once('exit', () => resolve(false))
    })
    if (claimed) {
      holder.stdout.destroy()
      holder.stdin.unref() // the pipe stays open (the lock held) but does not keep this process alive
      holder.unref()
      console.error(`benchmark lane ${lane} (lock ${LANE_DIR}/${lane}.lock)`)
      return lane
    }
  }
  throw new Error(`all ${LANES} benchmark lanes are taken (locks in ${LANE_DIR}); wait for another run to end`)
}

/**
 * The container backend's settings for {@code lane} of a script: {@code tag} (a letter, e.g. 'q') makes the netns/veth
 * prefix aenv<tag><lane>, {@code name} the runc dir /run/agentenv/bench-<name>-<lane>, the cgroup parent
 * agentenv-bench-<name>-<lane>, {@code id} the container ids b<id><lane>-*; lane L uses {@code slots} network slots
 * from {@code firstSlot + L * slots}.
 */
export function laneEnv(lane, { tag, name, id, firstSlot, slots }) {
  if (!Number.isInteger(lane) || lane < 0 || lane >= LANES) throw new Error(`lane must be 0..${LANES - 1}: ${lane}`)
  return {
    AENV_BACKEND_NAME_PREFIX: `aenv${tag}${lane}`,
    AENV_BACKEND_RUN_DIR: `/run/agentenv/bench-${name}-${lane}`,
    AENV_BACKEND_CGROUP_PARENT: `agentenv-bench-${name}-${lane}`,
    AENV_BACKEND_FIRST_SLOT: String(firstSlot + lane * slots),
    AENV_BACKEND_ID_PREFIX: `b${id}${lane}-`,
  }
}

/** `node bench/lib/lane.mjs hold`: claims a lane for a script in another language (see the top of this file). */
async function holdFromCommandLine() {
  let lane
  try {
    lane = await claimLane()
  } catch (e) {
    console.error(e.message)
    process.exit(1)
  }
  process.stdout.write(`${lane}\n`)
  process.stdin.on('end', () => process.exit(0))
  process.stdin.on('error', () => process.exit(0))
  process.stdin.resume()
}

if (process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  if (process.argv[2] !== 'hold') {
    console.error('usage: node bench/lib/lane.mjs hold   (prints the claimed lane, holds it until stdin closes)')
    process.exit(2)
  }
  await holdFromCommandLine()
}
