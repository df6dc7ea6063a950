// Speed at scale, with the unmodified npm `e2b` SDK against the server jar on loopback (container backend; the
// server's own defaults unless the environment sets AENV_BACKEND_POOL_SIZE or other AENV_* settings, which pass
// through). Needs root, scripts/setup-host.sh and the built jars; claims a `scale` benchmark lane (bench/lib/lane.mjs).
//
//   node bench/container/scale.mjs burst [size=20] [rounds=3] [settle ms=5000]
//       `size` concurrent Sandbox.create + commands.run('true'), `rounds` times after `settle` each; each sandbox's
//       time to interactive, then all killed at once: each kill's time to its answer.
//   node bench/container/scale.mjs sustained [seconds=30] [workers=8]
//       each worker loops create + first command + kill: creates completed per second over the window, once any warm
//       pool is spent (the first `pool size` creates are left out of the rate).
//   node bench/container/scale.mjs kill [n=30]
//       one sandbox at a time: create, first command, pause 200 ms, then the kill alone, timed to its answer.
//   node bench/container/scale.mjs census [creates=200] [concurrency=20]
//       creates with kills mixed in (every sandbox is killed a random 0-500 ms after its first command), then the
//       server stops and the host is checked: no mount, loop device or network namespace of the lane may be left.
//
// AENV_BENCH_SERVER_LOG=<file> keeps the server's log (its per-step timings). Every mode prints p50 / p95 rows and,
// for burst and sustained, the CPU the machine, the server and the sandboxes spent.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { hostLeftovers } from '../../e2e/lib/host-leaks.mjs'
import { startBenchServer } from '../lib/container-server.mjs'
import { claimLane, laneEnv, LAYOUTS } from '../lib/lane.mjs'

const mode = process.argv[2] ?? 'burst'
const args = process.argv.slice(3).map(Number)
const modes = ['burst', 'sustained', 'kill', 'census']
if (!modes.includes(mode)) throw new Error(`unknown mode ${mode} (${modes.join(', ')})`)
delete process.env.E2B_DEBUG

const lane = await claimLane()
const layout = LAYOUTS.scale
const server = await startBenchServer(lane, layout, {
  poolSize: process.env.AENV_BACKEND_POOL_SIZE,
  maxSandboxes: layout.slots,
})
const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 }
const now = () => performance.now()

/** Waits until `base`'s warm pool is full (GET /host): the template's boot image is built once per data dir. */
async function poolFilled(timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const host = await (await fetch(`${server.url}/host`, { headers: { 'X-API-Key': server.apiKey } })).json()
    const base = (host.warmPool ?? []).find((p) => p.templateID === 'base')
    if (base === undefined && Number(process.env.AENV_BACKEND_POOL_SIZE ?? 2) === 0) return
    if (base !== undefined && base.ready >= base.target) return
    await sleep(200)
  }
  throw new Error('the warm pool of base did not fill')
}

function report(what, samples, unit = 'ms') {
  const s = [...samples].sort((a, b) => a - b)
  const pct = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]
  console.log(`${what.padEnd(58)} n=${String(s.length).padStart(4)}  p50 ${pct(0.5).toFixed(1).padStart(8)} ${unit}` +
    `  p95 ${pct(0.95).toFixed(1).padStart(8)} ${unit}  max ${s.at(-1).toFixed(1).padStart(8)} ${unit}`)
}

/** CPU ms since `since`: the machine (all cores), the server JVM, its reaped children, the lane's sandboxes. */
const ticks = 100 // USER_HZ
function cpu(since) {
  const stat = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const machine = (stat[0] + stat[1] + stat[2] + stat[5] + stat[6]) * 1000 / ticks
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  const jvm = (Number(fields[11]) + Number(fields[12])) * 1000 / ticks
  const children = (Number(fields[13]) + Number(fields[14])) * 1000 / ticks
  let sandboxes = 0
  try {
    const cgroup = `/sys/fs/cgroup/cpuacct/${laneEnv(lane, layout).AENV_BACKEND_CGROUP_PARENT}/cpuacct.usage`
    sandboxes = Number(readFileSync(cgroup, 'utf8')) / 1e6
  } catch {
    // no sandbox ran yet
  }
  const at = { machine, jvm, children, sandboxes }
  if (since === undefined) return at
  return Object.fromEntries(Object.entries(at).map(([k, v]) => [k, Math.round(v - since[k])]))
}
const cpuLine = (spent) => `CPU ms: machine ${spent.machine} (both cores), server JVM ${spent.jvm}, its reaped ` +
  `children (runc, CRIU, ...) ${spent.children}, sandboxes ${spent.sandboxes}`
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

async function interactive() {
  const t0 = now()
  const sbx = await Sandbox.create('base', opts)
  await sbx.commands.run('true')
  return { sbx, tti: now() - t0 }
}

async function timedKill(sbx) {
  const t0 = now()
  await sbx.kill()
  return now() - t0
}

try {
  await poolFilled()
  if (mode === 'burst') {
    const [size = 20, rounds = 3, settle = 5000] = args
    const ttis = []
    const kills = []
    for (let r = 1; r <= rounds; r++) {
      await sleep(settle)
      const before = cpu()
      const started = now()
      const made = await Promise.all(Array.from({ length: size }, interactive))
      const all = now() - started
      const spent = cpu(before)
      const each = made.map((m) => m.tti).sort((a, b) => a - b)
      console.log(`${size}-way burst ${r} of ${rounds}: p50 ${each[Math.ceil(size / 2) - 1].toFixed(1)} p95 ` +
        `${each[Math.ceil(size * 0.95) - 1].toFixed(1)} ms, all interactive after ${all.toFixed(0)} ms; load ${load()}`)
      console.log(`  ${cpuLine(spent)}`)
      ttis.push(...each)
      kills.push(...await Promise.all(made.map((m) => timedKill(m.sbx))))
    }
    report(`time to interactive, ${size}-way burst (${rounds} rounds)`, ttis)
    report(`kill answered, ${size} at once`, kills)
  } else if (mode === 'sustained') {
    const [seconds = 30, workers = 8] = args
    const poolSize = Number(process.env.AENV_BACKEND_POOL_SIZE ?? 2)
    const ttis = []
    const kills = []
    const finished = [] // times at which a create became interactive
    const before = cpu()
    const started = now()
    const end = started + seconds * 1000
    await Promise.all(Array.from({ length: workers }, async () => {
      while (now() < end) {
        const { sbx, tti } = await interactive()
        finished.push(now())
        ttis.push(tti)
        kills.push(await timedKill(sbx))
      }
    }))
    const spent = cpu(before)
    finished.sort((a, b) => a - b)
    const counted = finished.slice(poolSize)
    const rate = counted.length > 1 ? (counted.length - 1) * 1000 / (counted.at(-1) - counted[0]) : 0
    console.log(`sustained: ${finished.length} creates in ${((now() - started) / 1000).toFixed(1)} s with ${workers} ` +
      `workers; ${rate.toFixed(2)} creates/s beyond the first ${poolSize} (the pool); load ${load()}`)
    console.log(`  ${cpuLine(spent)}; per create: machine ${(spent.machine / finished.length).toFixed(1)}, server ` +
      `${(spent.jvm / finished.length).toFixed(1)}, children ${(spent.children / finished.length).toFixed(1)}, ` +
      `sandboxes ${(spent.sandboxes / finished.length).toFixed(1)}`)
    report(`time to interactive, ${workers} workers in a loop`, ttis)
    report('kill answered, in the loop', kills)
  } else if (mode === 'kill') {
    const [n = 30] = args
    const kills = []
    for (let i = 0; i < n; i++) {
      const { sbx } = await interactive()
      await sleep(200)
      kills.push(await timedKill(sbx))
    }
    report('kill answered, one at a time', kills)
  } else {
    const [creates = 200, concurrency = 20] = args
    let started = 0
    let failed = 0
    const ttis = []
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (started < creates) {
        started++
        try {
          const { sbx, tti } = await interactive()
          ttis.push(tti)
          await sleep(Math.random() * 500)
          await sbx.kill()
        } catch (e) {
          failed++
          console.log(`create or kill failed: ${e.message}`)
        }
      }
    }))
    report(`time to interactive, ${concurrency} at a time`, ttis)
    console.log(`census: ${ttis.length} sandboxes created and killed, ${failed} failed`)
  }
} finally {
  if (process.env.AENV_BENCH_SERVER_LOG) writeFileSync(process.env.AENV_BENCH_SERVER_LOG, server.output())
  await server.stop({ timeoutMs: 120_000, keepDataDir: mode === 'census' })
}
/** Sandbox cgroups left under the lane's cgroup parent in any hierarchy, and processes still in one. */
function cgroupsAndProcesses() {
  const parent = laneEnv(lane, layout).AENV_BACKEND_CGROUP_PARENT
  const cgroups = []
  for (const hierarchy of readdirSync('/sys/fs/cgroup')) {
    const dir = `/sys/fs/cgroup/${hierarchy}/${parent}`
    if (!existsSync(dir)) continue
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) cgroups.push(`${hierarchy}/${parent}/${entry.name}`)
    }
  }
  const processes = []
  for (const pid of readdirSync('/proc').filter((p) => /^[0-9]+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(`/${parent}/`)) processes.push(pid)
    } catch {
      // exited meanwhile
    }
  }
  return { cgroups, processes }
}

if (mode === 'census') {
  const { AENV_BACKEND_RUN_DIR: runDir, AENV_BACKEND_NAME_PREFIX: namePrefix } = laneEnv(lane, layout)
  const left = { ...hostLeftovers({ dataDir: server.dataDir, runDir, namePrefix }), ...cgroupsAndProcesses() }
  const count = Object.values(left).reduce((sum, found) => sum + found.length, 0)
  console.log(`census after the server stopped: ${count === 0 ? 'nothing left' : JSON.stringify(left)}`)
  if (count > 0) process.exitCode = 1
}
