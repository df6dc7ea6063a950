// The e2e leak check for servers running the container backend: after the server stopped, nothing of its backend may
// be left on the host: no mount under its data dir (sandbox overlays and disks) or under its runc state root (the
// criu-root a failed `runc restore` leaves), no loop device backed by a file under its data dir (a sandbox's disk),
// no network namespace of its slots. Reads /proc/self/mountinfo, /sys/block and /run/netns; starts no process.
//
//   const server = await startServer({ backend: 'container', env: { AENV_BACKEND_RUN_DIR: RUN_DIR, AENV_BACKEND_NAME_PREFIX: 'aenvk', ... } })
//   ...
//   await stopAndAssertNoLeftovers(server, { runDir: RUN_DIR, namePrefix: 'aenvk' })
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'

const under = (path, dir) => path === dir || path.startsWith(dir.endsWith('/') ? dir : dir + '/')

/** mountinfo escapes space, tab, newline and backslash as \ooo. */
const unescape = (field) => field.replace(/\\([0-7]{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8)))

/** Mount points at or below any of `dirs`, from this process's mount table. */
export function mountsUnder(dirs) {
  const roots = dirs.map((d) => resolve(d))
  return readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((line) => line.split(' ')[4])
    .filter((field) => field !== undefined)
    .map(unescape)
    .filter((point) => roots.some((root) => under(point, root)))
}

/** Attached loop devices whose backing file is at or below `dir` ("loop3 -> /path/disk.img"). */
export function loopDevicesUnder(dir) {
  const root = resolve(dir)
  const found = []
  for (const device of readdirSync('/sys/block').filter((d) => /^loop[0-9]+$/.test(d))) {
    let backing
    try {
      backing = readFileSync(join('/sys/block', device, 'loop', 'backing_file'), 'utf8').trim()
    } catch {
      continue // not attached
    }
    if (under(backing, root)) found.push(`${device} -> ${backing}`)
  }
  return found
}

/** Network namespaces of the slots of a backend whose name prefix (AENV_BACKEND_NAME_PREFIX) is `namePrefix`. */
export function netnsOf(namePrefix) {
  if (!existsSync('/run/netns')) return []
  return readdirSync('/run/netns').filter((name) => name.startsWith(`${namePrefix}-n`))
}

/** What a container-backend server with this data dir, run dir (AENV_BACKEND_RUN_DIR) and name prefix left. */
export function hostLeftovers({ dataDir, runDir, namePrefix }) {
  return {
    mounts: mountsUnder([dataDir, join(runDir, 'runc')]),
    loops: loopDevicesUnder(dataDir),
    netns: netnsOf(namePrefix),
  }
}

const isEmpty = (left) => left.mounts.length === 0 && left.loops.length === 0 && left.netns.length === 0

/**
 * Stops the server (keeping its data dir), then waits up to `withinMs` for nothing of its backend to be left (a disk's
 * loop device clears itself a moment after its unmount) and removes the data dir; throws naming what is left
 * otherwise, leaving the data dir in place (never deleting into a mount).
 */
export async function stopAndAssertNoLeftovers(server, { runDir, namePrefix, timeoutMs = 120_000, withinMs = 10_000 }) {
  await server.stop({ timeoutMs, keepDataDir: true })
  const deadline = Date.now() + withinMs
  let left = hostLeftovers({ dataDir: server.dataDir, runDir, namePrefix })
  while (!isEmpty(left) && Date.now() < deadline) {
    await delay(100)
    left = hostLeftovers({ dataDir: server.dataDir, runDir, namePrefix })
  }
  if (!isEmpty(left)) {
    throw new Error(`the stopped server left host resources behind (data dir ${server.dataDir} kept): ${JSON.stringify(left)}`)
  }
  rmSync(server.dataDir, { recursive: true, force: true })
}
