// What an idle warm-pool member costs (the AENV_BACKEND_POOL_SIZE trade-off): the server jar with the container backend
// and a warm pool of N (argument, default 10) on a benchmark lane (bench/lib/lane.mjs, sdk layout), one create + kill
// to build the template's boot image, then a wait until the pool is full (N sandbox cgroups with processes in the
// lane's cgroup parent) and has settled (AENV_BENCH_POOL_SETTLE_MS, default 10000), then IDLE seconds (second argument, default 30)
// with nobody calling: per member (each restored sandbox's cgroup) the CPU time (cpuacct, load-insensitive) and the
// memory of its processes (PSS, private = Private_Clean + Private_Dirty, RSS from /proc/<pid>/smaps_rollup), and the
// server JVM's own CPU. Run it with N = 0 too: the server's idle CPU without members is the baseline. Also the host's
// samepage merging over the idle window (ksmd's CPU, pages_sharing: the pages it saved, host-wide; scripts/setup-host.sh
// starts ksmd, docs/container-backend.md), and last a create + first command that claims one of the members that
// idled (each member's memory merged by then, unless ksmd is off): what a claim pays for writing to merged pages.
// AENV_BACKEND_ENVD_DIR runs another envd build (bench/lib/container-server.mjs): run two in turn for an A/B. Needs
// root, scripts/setup-host.sh and the built jars:
//   mvn -B -q -DskipTests package && node bench/container/pool-idle.mjs [N] [idle seconds]
import { join } from 'node:path'
import { readFileSync, readdirSync, existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startBenchServer } from '../lib/container-server.mjs'
import { claimLane, LAYOUTS } from '../lib/lane.mjs'

const poolSize = Number(process.argv[2] ?? 10)
const idleSeconds = Number(process.argv[3] ?? 30)
const settleMs = Number(process.env.AENV_BENCH_POOL_SETTLE_MS ?? 10000)
const lane = await claimLane()
const server = await startBenchServer(lane, LAYOUTS.sdk, { poolSize })
const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 }
const cpuacct = `/sys/fs/cgroup/cpuacct/agentenv-bench-sdk-${lane}`

/** The lane's sandbox cgroups with processes in them: name -> { cpuMs, pids }. */
function members() {
  const found = {}
  const walk = (dir, name) => {
    let procs, cpuMs, entries
    try {
      procs = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number)
      cpuMs = Number(readFileSync(join(dir, 'cpuacct.usage'), 'utf8')) / 1e6
      entries = readdirSync(dir, { withFileTypes: true })
    } catch { return } // removed meanwhile (a killed sandbox's release runs after the kill's answer)
    if (name !== '' && procs.length > 0) found[name] = { cpuMs, pids: procs }
    for (const d of entries) {
      if (d.isDirectory()) walk(join(dir, d.name), name === '' ? d.name : `${name}/${d.name}`)
    }
  }
  if (existsSync(cpuacct)) walk(cpuacct, '')
  return found
}

/** PSS, private and RSS in KiB of the given processes (smaps_rollup), summed. */
function memoryKib(pids) {
  const sum = { pss: 0, priv: 0, rss: 0 }
  for (const pid of pids) {
    let text
    try {
      text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    } catch { continue } // ended meanwhile
    const field = (k) => Number((text.match(new RegExp(`^${k}:\\s+(\\d+)`, 'm')) ?? [0, 0])[1])
    sum.pss += field('Pss')
    sum.priv += field('Private_Clean') + field('Private_Dirty')
    sum.rss += field('Rss')
  }
  return sum
}

const serverCpuMs = () => {
  const f = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}
/** ksmd's CPU in ms (10 ms ticks) and the host's KSM counters; ksmd absent: CPU -1. */
function ksm() {
  const read = (k) => { try { return Number(readFileSync(`/sys/kernel/mm/ksm/${k}`, 'utf8')) } catch { return -1 } }
  let cpuMs = -1
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (!stat.includes('(ksmd)')) continue
      const f = stat.split(') ')[1].split(' ')
      cpuMs = (Number(f[11]) + Number(f[12])) * 10
      break
    } catch { /* ended meanwhile */ }
  }
  return { cpuMs, run: read('run'), sharing: read('pages_sharing'), shared: read('pages_shared') }
}

const serverRssKib = () => Number(readFileSync(`/proc/${server.pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1])
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] ?? 0
const mib = (kib) => (kib / 1024).toFixed(1)

try {
  await (await Sandbox.create('base', opts)).kill() // builds the template's boot image on a fresh data dir
  const deadline = Date.now() + 60_000 + poolSize * 5_000
  // the pool restores members until it holds N
  while (Object.keys(members()).length < poolSize) {
    if (Date.now() > deadline) throw new Error(`the pool did not fill to ${poolSize} in time (${Object.keys(members()).length})`)
    await sleep(200)
  }
  await sleep(settleMs)
  const m0 = members()
  const s0 = serverCpuMs()
  const k0 = ksm()
  const t0 = performance.now()
  await sleep(idleSeconds * 1000)
  const seconds = (performance.now() - t0) / 1000
  const m1 = members()
  const s1 = serverCpuMs()
  const k1 = ksm()
  const names = Object.keys(m1).filter((k) => k in m0)
  const cpuPerSecond = names.map((k) => (m1[k].cpuMs - m0[k].cpuMs) / seconds)
  const mem = names.map((k) => memoryKib(m1[k].pids))
  console.log(`warm pool of ${poolSize}: ${names.length} members idle for ${seconds.toFixed(1)} s (settled ${settleMs} ms after filling)`)
  if (names.length > 0) {
    console.log(`per member: CPU ${median(cpuPerSecond).toFixed(3)} ms/s median (min ${Math.min(...cpuPerSecond).toFixed(3)}, ` +
      `max ${Math.max(...cpuPerSecond).toFixed(3)}, all members ${cpuPerSecond.reduce((a, b) => a + b, 0).toFixed(2)} ms/s); ` +
      `PSS ${mib(median(mem.map((x) => x.pss)))} MiB, private ${mib(median(mem.map((x) => x.priv)))} MiB, ` +
      `RSS ${mib(median(mem.map((x) => x.rss)))} MiB (medians); all members PSS ${mib(mem.reduce((a, x) => a + x.pss, 0))} MiB`)
  }
  console.log(`server JVM: CPU ${((s1 - s0) / seconds).toFixed(2)} ms/s (10 ms ticks), RSS ${mib(serverRssKib())} MiB; ` +
    `load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
  console.log(`ksm: run=${k1.run}, ksmd CPU ${k0.cpuMs < 0 ? 'n/a' : ((k1.cpuMs - k0.cpuMs) / seconds).toFixed(2) + ' ms/s'}; ` +
    `pages_sharing ${k0.sharing} -> ${k1.sharing} (${mib(k1.sharing * 4)} MiB saved host-wide), pages_shared ${k1.shared}`)
  // up to 5 claims in a row, before the refills' members (restored after the first claim) can be the ones claimed
  const creates = []
  const firsts = []
  for (let i = 0; i < Math.min(poolSize, 5); i++) {
    const c0 = performance.now()
    const sandbox = await Sandbox.create('base', opts)
    const c1 = performance.now()
    await sandbox.commands.run('true')
    creates.push(c1 - c0)
    firsts.push(performance.now() - c1)
    await sandbox.kill()
  }
  if (creates.length > 0) {
    console.log(`claims of idled members (${creates.length}): create ${creates.map((x) => x.toFixed(1)).join(' ')} ms, ` +
      `first command ${firsts.map((x) => x.toFixed(1)).join(' ')} ms (medians ${median(creates).toFixed(1)}, ${median(firsts).toFixed(1)})`)
  }
} finally {
  await server.stop({ timeoutMs: 120_000 })
}
