// Capacity: how many running idle sandboxes fit before create fails, through the server's REST API (the server jar
// with the container backend, as the e2b SDK would create them: POST /sandboxes one at a time), what ran out (the
// API's status code and message), resident memory per sandbox and host memory at the end; then every sandbox is
// deleted, the server stopped, and the host checked for leftovers (netns, veths, mounts, cgroups, processes, runc
// state, firewall chains). Each run claims a benchmark lane L (bench/lib/lane.mjs, shared with bench/container/run.sh)
// and the server runs with that lane's names, so it never touches another run: netns/veth prefix aenvcL, runc dir
// /run/agentenv/bench-capacity-L, cgroup parent agentenv-bench-capacity-L, container ids bcapL-*, network slots
// 2048 + 768 L (so at most 768 sandboxes), a fresh data dir, and no warm pool (every sandbox counted is one the API
// created).
//
//   node bench/capacity/capacity.mjs <max_sandboxes> [reserve MiB = 6144] [budget s = 420] [memory limit MiB]
//
// With a memory limit, the sandboxes' parent cgroup (memory v1, swap included) gets that limit before the server
// starts, so running out of memory can be observed (which create fails, how, and what happens to the sandboxes
// already running: OOM kills are counted) without exhausting the shared host.
//
// It stops at the first failed create, or (to leave the shared machine usable) when the host's MemAvailable falls
// below the reserve, or when the time budget is spent; the report says which. Exit status 1 if anything was left.
// Needs root, scripts/setup-host.sh and the built jars (mvn -B -q -DskipTests package).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startServer, repoRoot, SERVE_JVM_OPTIONS } from '../../e2e/lib/control-plane-harness.mjs'
import { claimLane, laneEnv, LAYOUTS } from '../lib/lane.mjs'

const LANE_SLOTS = LAYOUTS.capacity.slots

const maxSandboxes = Number(process.argv[2])
const reserveMiB = Number(process.argv[3] ?? 6144)
const budgetMs = Number(process.argv[4] ?? 420) * 1000
const memoryLimitMiB = process.argv[5] === undefined ? null : Number(process.argv[5])
if (!Number.isInteger(maxSandboxes) || maxSandboxes < 1 || maxSandboxes > LANE_SLOTS || !(reserveMiB >= 0) || !(budgetMs > 0)
    || (memoryLimitMiB !== null && !(Number.isInteger(memoryLimitMiB) && memoryLimitMiB >= 256))) {
  console.error(`usage: node bench/capacity/capacity.mjs <max_sandboxes 1..${LANE_SLOTS}> [reserve MiB] [budget s] [memory limit MiB >= 256]`)
  process.exit(2)
}
if (process.getuid() !== 0) {
  console.error('run as root (containers, mounts, network namespaces)')
  process.exit(2)
}

const lane = await claimLane()
const names = laneEnv(lane, LAYOUTS.capacity)
const NAME_PREFIX = names.AENV_BACKEND_NAME_PREFIX
const RUN_DIR = names.AENV_BACKEND_RUN_DIR
const CGROUP_PARENT = names.AENV_BACKEND_CGROUP_PARENT
const ID_PREFIX = names.AENV_BACKEND_ID_PREFIX
const CG = '/sys/fs/cgroup'

const meminfo = () => Object.fromEntries(readFileSync('/proc/meminfo', 'utf8').trim().split('\n')
  .map((l) => { const [k, v] = l.split(/:\s+/); return [k, Number.parseInt(v, 10) / 1024] })) // MiB
const cgroupFile = (controller, file) => {
  const p = join(CG, controller, CGROUP_PARENT, file)
  return existsSync(p) ? readFileSync(p, 'utf8') : ''
}
const memoryStat = () => Object.fromEntries(cgroupFile('memory', 'memory.stat').trim().split('\n').filter(Boolean)
  .map((l) => { const [k, v] = l.split(' '); return [k, Number(v)] }))
const processRssMiB = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}
const run = (cmd, args) => { try { return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }) } catch { return '' } }
const pct = (samples, p) => { const s = [...samples].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] }
const mib = (x) => `${x.toFixed(1)} MiB`

/** What this run's names could have left on the host; empty when clean. */
function leftovers(dataDir) {
  const found = []
  const netns = run('ip', ['netns', 'list']).split('\n').filter((l) => l.startsWith(NAME_PREFIX))
  if (netns.length) found.push(`netns: ${netns.length} (${netns.slice(0, 3).join(', ')})`)
  const links = run('ip', ['-o', 'link', 'show']).split('\n').filter((l) => l.includes(`: ${NAME_PREFIX}`))
  if (links.length) found.push(`veths: ${links.length}`)
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .filter((l) => l.includes(RUN_DIR) || l.includes(dataDir) || l.includes(`/${ID_PREFIX}`))
  if (mounts.length) found.push(`mounts: ${mounts.length}`)
  for (const controller of readdirSync(CG)) {
    const dir = join(CG, controller, CGROUP_PARENT)
    if (existsSync(dir)) {
      const children = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory())
      if (children.length) found.push(`cgroups under ${dir}: ${children.length}`)
      const procs = readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim()
      if (procs) found.push(`processes in ${dir}`)
    }
  }
  const stray = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try { return readFileSync(`/proc/${p}/cgroup`, 'utf8').includes(`/${CGROUP_PARENT}/`) } catch { return false }
  })
  if (stray.length) {
    const what = stray.slice(0, 5).map((p) => { try { return `${p} ${readFileSync(`/proc/${p}/comm`, 'utf8').trim()}` } catch { return p } })
    found.push(`processes: ${stray.length} (${what.join(', ')})`)
  }
  const runcState = join(RUN_DIR, 'runc')
  if (existsSync(runcState) && readdirSync(runcState).length) found.push(`runc state: ${readdirSync(runcState).join(', ')}`)
  if (run('nft', ['list', 'ruleset']).includes(NAME_PREFIX)) found.push('firewall rules naming ' + NAME_PREFIX)
  return found
}

if (memoryLimitMiB !== null) {
  const dir = join(CG, 'memory', CGROUP_PARENT)
  mkdirSync(dir, { recursive: true })
  const bytes = String(memoryLimitMiB * 1048576)
  writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes)
  if (existsSync(join(dir, 'memory.memsw.limit_in_bytes'))) writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), bytes)
}
const oomKills = () => Number(/^oom_kill (\d+)$/m.exec(cgroupFile('memory', 'memory.oom_control'))?.[1] ?? 0)

const startedAt = Date.now()
const memStart = meminfo()
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
console.log(`capacity: max_sandboxes ${maxSandboxes}, reserve ${reserveMiB} MiB, budget ${budgetMs / 1000} s` +
  `${memoryLimitMiB === null ? '' : `, sandboxes' parent cgroup limited to ${memoryLimitMiB} MiB`}; ` +
  `host MemTotal ${mib(memStart.MemTotal)}, MemAvailable ${mib(memStart.MemAvailable)}; load ${load()}`)

const server = await startServer({
  backend: 'container',
  jvmOptions: SERVE_JVM_OPTIONS, // the server as scripts/serve.sh runs it (C2 on), not the tests' quick-start options
  readyTimeoutMs: 120_000,
  env: {
    ...names,
    AENV_BACKEND_MAX_SANDBOXES: String(maxSandboxes),
    AENV_BACKEND_POOL_SIZE: '0',
    AENV_BACKEND_CPU_COUNT: '1',
    AENV_BACKEND_MEMORY_MB: '512',
    AENV_BACKEND_ENVD_DIR: join(repoRoot, 'agentenv-envd', 'target'),
  },
})
const dataDir = server.dataDir
const headers = { 'X-API-Key': server.apiKey, 'Content-Type': 'application/json' }
const ids = []
let stop = null
let exitCode = 0
try {
  const createMs = []
  while (!stop) {
    if (Date.now() - startedAt > budgetMs) { stop = { why: `time budget of ${budgetMs / 1000} s spent` }; break }
    const available = meminfo().MemAvailable
    if (available < reserveMiB) { stop = { why: `host MemAvailable ${mib(available)} below the reserve of ${reserveMiB} MiB` }; break }
    const t0 = performance.now()
    const res = await fetch(`${server.url}/sandboxes`, {
      method: 'POST', headers, body: JSON.stringify({ templateID: 'base', timeout: 3600 }),
      signal: AbortSignal.timeout(120_000),
    })
    const body = await res.text()
    if (res.status !== 201) { stop = { why: 'create failed', status: res.status, body }; break }
    createMs.push(performance.now() - t0)
    ids.push(JSON.parse(body).sandboxID)
    if (ids.length % 50 === 0) {
      console.log(`  ${ids.length} running; last create ${createMs.at(-1).toFixed(0)} ms; MemAvailable ${mib(meminfo().MemAvailable)}; load ${load()}`)
    }
  }
  await sleep(5000) // let the last ones settle (envd's JIT and GC after /init)
  // CPU the idle sandboxes use together (cpuacct of their parent cgroup over 10 s), to tell idle load from other processes'
  const cpuNs = () => Number(cgroupFile('cpuacct', 'cpuacct.usage').trim() || NaN)
  const cpu0 = cpuNs()
  await sleep(10_000)
  const idleCpuPct = (cpuNs() - cpu0) / 1e7 // ns over 10 s -> percent of one CPU
  const mem = meminfo()
  const stat = memoryStat()
  const n = ids.length
  const threads = Number(cgroupFile('pids', 'pids.current').trim() || NaN)
  console.log(`stopped after ${n} running sandboxes (${((Date.now() - startedAt) / 1000).toFixed(0)} s): ${stop.why}`)
  if (stop.status) {
    console.log(`  API answer: HTTP ${stop.status} ${stop.body.slice(0, 400)}`)
    const failedId = /sandbox (\S+) could not/.exec(stop.body)?.[1]
    const lines = server.output().split('\n')
    const at = failedId ? lines.findIndex((l) => l.includes(failedId) && /failed/.test(l)) : -1
    const causes = at < 0 ? [] : lines.slice(at, at + 200).filter((l, i) => i === 0 || /^(Caused by|\S*Exception)/.test(l))
    for (const line of causes.slice(0, 6)) console.log(`  server log: ${line.slice(0, 600)}`)
  }
  if (n > 0) {
    console.log(`  create latency: first 10 p50 ${pct(createMs.slice(0, 10), 0.5).toFixed(0)} ms, last 10 p50 ` +
      `${pct(createMs.slice(-10), 0.5).toFixed(0)} ms, all p95 ${pct(createMs, 0.95).toFixed(0)} ms`)
    console.log(`  resident per sandbox (cgroup total_rss + total_mapped_file / n): ` +
      `${mib((stat.total_rss + stat.total_mapped_file) / 1048576 / n)}; with page cache (total_cache): ` +
      `${mib((stat.total_rss + stat.total_cache) / 1048576 / n)}`)
    console.log(`  host MemAvailable drop per sandbox: ${mib((memStart.MemAvailable - mem.MemAvailable) / n)}; ` +
      `tasks (threads) per sandbox: ${(threads / n).toFixed(1)} (kernel.pid_max ${readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim()})`)
    console.log(`  CPU of all ${n} idle sandboxes together over 10 s: ${idleCpuPct.toFixed(1)} % of one CPU ` +
      `(${(idleCpuPct / n * 10).toFixed(2)} ‰ each)`)
  }
  if (memoryLimitMiB !== null) {
    const list = await (await fetch(`${server.url}/sandboxes`, { headers })).json()
    const alive = []
    for (const id of ids) {
      const r = await fetch(`${server.url}/sandboxes/${id}`, { headers })
      if (r.status === 200) alive.push(id)
    }
    const pidsDir = join(CG, 'pids', CGROUP_PARENT)
    const withEnvd = readdirSync(pidsDir, { withFileTypes: true }).filter((d) => d.isDirectory()).filter((d) =>
      readFileSync(join(pidsDir, d.name, 'cgroup.procs'), 'utf8').trim().split('\n').filter(Boolean).some((pid) => {
        try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'java' } catch { return false }
      })).length
    console.log(`  memory limit: ${oomKills()} OOM kills in the parent cgroup; ${withEnvd} sandbox cgroups still have ` +
      `envd's JVM; API lists ${list.length} sandboxes, ` +
      `${alive.length} of ${n} created answer GET /sandboxes/{id} 200; cgroup usage ${mib(Number(cgroupFile('memory', 'memory.usage_in_bytes')) / 1048576)}`)
  }
  console.log(`  host at the end: MemTotal ${mib(mem.MemTotal)}, MemAvailable ${mib(mem.MemAvailable)}, ` +
    `Committed_AS ${mib(mem.Committed_AS)}; server RSS ${mib(processRssMiB(server.pid))}; load ${load()}`)
} catch (e) {
  console.error('capacity run failed:', e)
  exitCode = 1
} finally {
  const t0 = performance.now()
  const failed = []
  const queue = [...ids]
  await Promise.all(Array.from({ length: 4 }, async () => {
    for (let id = queue.shift(); id; id = queue.shift()) {
      const res = await fetch(`${server.url}/sandboxes/${id}`, { method: 'DELETE', headers, signal: AbortSignal.timeout(120_000) })
      if (res.status !== 204) failed.push(`${id}: HTTP ${res.status}`)
    }
  }))
  console.log(`deleted ${ids.length - failed.length} of ${ids.length} in ${((performance.now() - t0) / 1000).toFixed(1)} s` +
    (failed.length ? `; failed: ${failed.slice(0, 5).join(', ')}` : ''))
  await server.stop({ timeoutMs: 180_000 })
  let left = leftovers(dataDir)
  const first = left
  let waited = 0
  for (; waited < 20 && left.length; waited++) { // processes killed a moment ago may still be exiting
    await sleep(500)
    left = leftovers(dataDir)
  }
  if (first.length) console.log(`right after the server stopped: ${first.join('; ')}; ${left.length ? 'still there' : 'gone'} after ${waited * 0.5} s`)
  if (left.length) {
    console.log(`LEFT BEHIND: ${left.join('; ')}`)
    exitCode = 1
  } else {
    console.log('nothing left behind: no netns, veth, mount, cgroup, process, runc state or firewall rule of this run')
    for (const controller of readdirSync(CG)) { // the empty parents the backend created
      try { rmdirSync(join(CG, controller, CGROUP_PARENT)) } catch { /* not there or busy */ }
    }
  }
  if (failed.length) exitCode = 1
}
process.exit(exitCode)
