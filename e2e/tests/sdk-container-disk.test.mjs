// A sandbox's resources through the unmodified npm `e2b` SDK against the server jar with the real container backend:
// every sandbox writes to its own disk of AENV_BACKEND_DISK_MB (here 1024, E2B's smallest), which GET /sandboxes/{id}
// and the list report as diskSizeMB, `df /` and envd's metrics show, and which a write cannot go past (files.write gets
// envd's 507, the SDK's NotEnoughSpaceError) while the sandbox runs on; and its CPUs and memory (here 1 and 512 MiB, on
// a host of more) are what free, nproc, Python's os.cpu_count() and /proc show inside (LXCFS's views and its cpuset).
// Needs root and a host prepared by scripts/setup-host.sh; skipped otherwise (failed when AENV_REQUIRE_HOST_TESTS=1).
// The server runs with its own names and network slots, so it does not touch a server or test run next to it.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { Sandbox, NotEnoughSpaceError } from 'e2b'
import { startSuiteServer, stopSuiteServer } from '../lib/container-suite.mjs'
import { unready, hostTest } from '../lib/host-tests.mjs'

const DISK_MB = 1024
const CPU_COUNT = 1
const MEMORY_MB = 512

// the suite's own names, run dir, cgroup parent, network slots and sandbox ids (container-suite.mjs)
const LANE = {
  namePrefix: 'aenvd',
  runDir: '/run/agentenv/e2e-disk',
  cgroupParent: 'agentenv-e2e-disk',
  firstSlot: 12800,
  idPrefix: 'dsk-',
}

let server
let opts
let serverStarted // ms: every sandbox of this suite, warm members included, was restored after it

before(async () => {
  serverStarted = Date.now()
  if (!unready) ({ server, opts } = await startSuiteServer(LANE, {
    AENV_BACKEND_MAX_SANDBOXES: '8',
    AENV_BACKEND_POOL_SIZE: '1',
    AENV_BACKEND_DISK_MB: String(DISK_MB),
    AENV_BACKEND_CPU_COUNT: String(CPU_COUNT),
    AENV_BACKEND_MEMORY_MB: String(MEMORY_MB),
  }))
})

after(async () => {
  if (server) await stopSuiteServer(server, LANE)
})

async function api(path) {
  const res = await fetch(`${server.url}${path}`, { headers: { 'X-API-Key': server.apiKey } })
  assert.equal(res.status, 200, `GET ${path}`)
  return res.json()
}

hostTest('diskSizeMB is reported and shown by df and envd; a write past it gets 507', async () => {
  const sbx = await Sandbox.create('base', opts)
  try {
    const detail = await api(`/sandboxes/${sbx.sandboxId}`)
    assert.equal(detail.diskSizeMB, DISK_MB)
    const listed = (await api('/sandboxes')).find((s) => s.sandboxID === sbx.sandboxId)
    assert.equal(listed.diskSizeMB, DISK_MB)
    const info = await Sandbox.getInfo(sbx.sandboxId, opts)
    assert.equal(info.cpuCount, detail.cpuCount)
    assert.equal(info.memoryMB, detail.memoryMB)

    const df = await sbx.commands.run('df -B1M --output=size,avail / | tail -n 1')
    const [sizeMb] = df.stdout.trim().split(/\s+/).map(Number)
    assert.ok(sizeMb > DISK_MB - 40 && sizeMb <= DISK_MB, `df / shows ${sizeMb} MiB`)
    const [metrics] = await sbx.getMetrics()
    const envdMb = metrics.diskTotal / (1 << 20)
    assert.ok(envdMb > sizeMb - 1 && envdMb <= sizeMb, `envd's diskTotal is ${envdMb} MiB, df's ${sizeMb} MiB`)

    // fill the disk to ~64 MiB below its end, then write 128 MiB through envd's file API
    await sbx.commands.run(`fallocate -l ${sizeMb - 64}M /home/user/fill`)
    const tooBig = new Uint8Array(128 << 20).fill(7)
    await assert.rejects(sbx.files.write('/home/user/too-big', tooBig), (e) => e instanceof NotEnoughSpaceError)

    assert.equal((await sbx.commands.run('echo alive')).stdout, 'alive\n')
    const dd = await sbx.commands.run('dd if=/dev/zero of=/home/user/more bs=1M count=256 2>&1 || true')
    assert.match(dd.stdout, /No space left on device/)
    await sbx.commands.run('rm -f /home/user/fill /home/user/more /home/user/too-big')
    await sbx.files.write('/home/user/fits', tooBig)
    assert.equal((await sbx.files.getInfo('/home/user/fits')).size, tooBig.length)
  } finally {
    await sbx.kill().catch(() => {})
  }
})

/** What the sandbox's own tools report of its CPUs, memory, uptime and load (one command, one value per line). */
async function resourcesSeenIn(sbx) {
  const run = await sbx.commands.run([
    "free -m | awk '/^Mem:/ {print $2}'",
    'nproc',
    "python3 -c 'import os; print(os.cpu_count())'",
    "grep -c '^processor' /proc/cpuinfo",
    "cut -d ' ' -f 1 /proc/uptime",
    'cat /proc/loadavg',
  ].join('; '))
  const [freeMb, nproc, osCpuCount, processors, uptime, loadavg] = run.stdout.trim().split('\n')
  return { freeMb: Number(freeMb), nproc: Number(nproc), osCpuCount: Number(osCpuCount), processors: Number(processors), uptime: Number(uptime), loadavg }
}

function assertOwnResources(seen, what) {
  assert.deepEqual(
    { freeMb: seen.freeMb, nproc: seen.nproc, osCpuCount: seen.osCpuCount, processors: seen.processors },
    { freeMb: MEMORY_MB, nproc: CPU_COUNT, osCpuCount: CPU_COUNT, processors: CPU_COUNT },
    `${what}: free, nproc, os.cpu_count() and /proc/cpuinfo show the sandbox's resources`)
  const hostUptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0])
  const sinceServerStart = (Date.now() - serverStarted) / 1000
  assert.ok(seen.uptime >= 0 && seen.uptime <= sinceServerStart + 1 && seen.uptime < hostUptime,
    `${what}: /proc/uptime ${seen.uptime} s is the sandbox's (server up ${sinceServerStart} s, host ${hostUptime} s)`)
  assert.match(seen.loadavg, /^\d+\.\d\d \d+\.\d\d \d+\.\d\d \d+\/\d+ \d+$/, `${what}: /proc/loadavg`)
}

hostTest('free, nproc, os.cpu_count and /proc are the sandbox\'s: warm, resumed, forked', async () => {
  assert.ok(Number(readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm).length) > CPU_COUNT, 'a host of more CPUs')
  const sbx = await Sandbox.create('base', opts) // a warm member (pool size 1): restored before this create
  try {
    const info = await Sandbox.getInfo(sbx.sandboxId, opts)
    assert.equal(info.cpuCount, CPU_COUNT)
    assert.equal(info.memoryMB, MEMORY_MB)
    assertOwnResources(await resourcesSeenIn(sbx), 'a new sandbox')

    assert.equal(await sbx.pause(), true)
    await sbx.connect()
    assertOwnResources(await resourcesSeenIn(sbx), 'after a pause and connect')

    const [child] = await sbx.fork({ count: 1 })
    assert.ok(!(child instanceof Error), String(child))
    try {
      assertOwnResources(await resourcesSeenIn(child), 'a fork child')
    } finally {
      await child.kill()
    }
  } finally {
    await sbx.kill().catch(() => {})
  }
})
