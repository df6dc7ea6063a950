// Host housekeeping: what the server itself spends per second while its sandboxes sit idle (liveness checks, the
// zombie reaper, metrics sampling, ...), with 0, 10 and 40 running sandboxes (or the counts given). Starts the server
// jar with the container backend as bench/capacity/capacity.mjs does (its own benchmark lane, a fresh data dir, no
// warm pool, 1 CPU and 512 MiB per sandbox), creates sandboxes up to each count through POST /sandboxes, lets them
// settle, then reads the server JVM's CPU time (utime + stime of /proc/<pid>/stat) and the idle sandboxes' CPU
// (cpuacct of their parent cgroup: all of them, and divided by their count) over a window, and the load average at
// its start and end. At the end every sandbox is deleted, the server stopped and the host checked for leftovers of
// the run.
//
//   node bench/capacity/idle-host.mjs [counts = 0,10,40] [window s = 60] [settle s = 15]
//
// The server's CPU per second is the load-insensitive number (CPU time, not wall time); it still includes the work
// the server does for the sandboxes on its own schedule (e.g. envd metrics every AENV_METRICS_SAMPLE_INTERVAL_MS,
// passed through when set). Needs root, scripts/setup-host.sh and the built jars (mvn -B -q -DskipTests package).
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, rmdirSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startServer, repoRoot, SERVE_JVM_OPTIONS } from '../../e2e/lib/control-plane-harness.mjs'
import { claimLane, laneEnv, LAYOUTS } from '../lib/lane.mjs'

const counts = (process.argv[2] ?? '0,10,40').split(',').map(Number)
const windowS = Number(process.argv[3] ?? 60)
const settleS = Number(process.argv[4] ?? 15)
if (counts.some((n) => !Number.isInteger(n) || n < 0 || n > LAYOUTS.capacity.slots)
    || counts.some((n, i) => i > 0 && n < counts[i - 1]) || !(windowS > 0) || !(settleS >= 0)) {
  console.error(`usage: node bench/capacity/idle-host.mjs [ascending counts 0..${LAYOUTS.capacity.slots}, e.g. 0,10,40] [window s] [settle s]`)
  process.exit(2)
}
if (process.getuid() !== 0) {
  console.error('run as root (containers, mounts, network namespaces)')
  process.exit(2)
}

const lane = await claimLane()
const names = laneEnv(lane, LAYOUTS.capacity)
const CG = '/sys/fs/cgroup'
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const cpuMs = (pid) => { // utime + stime (fields 14 and 15) of the whole process
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}
const sandboxesCpuMs = () => {
  const p = join(CG, 'cpuacct', names.AENV_BACKEND_CGROUP_PARENT, 'cpuacct.usage')
  return existsSync(p) ? Number(readFileSync(p, 'utf8').trim()) / 1e6 : NaN
}
const threads = (pid) => readdirSync(`/proc/${pid}/task`).length
const run = (cmd, args) => { try { return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }) } catch { return '' } }

const env = {
  ...names,
  AENV_BACKEND_MAX_SANDBOXES: String(Math.max(8, counts.at(-1))),
  AENV_BACKEND_POOL_SIZE: '0',
  AENV_BACKEND_CPU_COUNT: '1',
  AENV_BACKEND_MEMORY_MB: '512',
  AENV_BACKEND_ENVD_DIR: join(repoRoot, 'agentenv-envd', 'target'),
}
if (process.env.AENV_METRICS_SAMPLE_INTERVAL_MS) env.AENV_METRICS_SAMPLE_INTERVAL_MS = process.env.AENV_METRICS_SAMPLE_INTERVAL_MS
console.log(`idle-host: counts ${counts.join(', ')}, window ${windowS} s, settle ${settleS} s; load ${load()}`)
const server = await startServer({ backend: 'container', jvmOptions: SERVE_JVM_OPTIONS, readyTimeoutMs: 120_000, env })
const headers = { 'X-API-Key': server.apiKey, 'Content-Type': 'application/json' }
const ids = []
let exitCode = 0
try {
  console.log('| running | server CPU ms/s | per sandbox ms/s | sandboxes\' CPU ms/s | per sandbox ms/s | server threads | load at start → end |')
  console.log('|---|---|---|---|---|---|---|')
  let base = null
  for (const count of counts) {
    while (ids.length < count) {
      const res = await fetch(`${server.url}/sandboxes`, {
        method: 'POST', headers, body: JSON.stringify({ templateID: 'base', timeout: 3600 }), signal: AbortSignal.timeout(120_000),
      })
      const body = await res.text()
      if (res.status !== 201) throw new Error(`create failed: HTTP ${res.status} ${body.slice(0, 300)}`)
      ids.push(JSON.parse(body).sandboxID)
    }
    await sleep(settleS * 1000)
    const load0 = load()
    const s0 = cpuMs(server.pid)
    const c0 = sandboxesCpuMs()
    const t0 = performance.now()
    await sleep(windowS * 1000)
    const seconds = (performance.now() - t0) / 1000
    const serverPerS = (cpuMs(server.pid) - s0) / seconds
    const sandboxesPerS = (sandboxesCpuMs() - c0) / seconds
    base ??= count === 0 ? serverPerS : null
    const perSandbox = count > 0 && base !== null ? ((serverPerS - base) / count).toFixed(3) : '–'
    const eachSandbox = count > 0 && !Number.isNaN(sandboxesPerS) ? (sandboxesPerS / count).toFixed(3) : '–'
    console.log(`| ${count} | ${serverPerS.toFixed(2)} | ${perSandbox} | ${Number.isNaN(sandboxesPerS) ? '–' : sandboxesPerS.toFixed(1)} | ` +
      `${eachSandbox} | ` +
      `${threads(server.pid)} | ${load0} → ${load()} |`)
  }
} catch (e) {
  console.error('idle-host run failed:', e)
  exitCode = 1
} finally {
  const queue = [...ids]
  const failed = []
  await Promise.all(Array.from({ length: 4 }, async () => {
    for (let id = queue.shift(); id; id = queue.shift()) {
      const res = await fetch(`${server.url}/sandboxes/${id}`, { method: 'DELETE', headers, signal: AbortSignal.timeout(120_000) })
      if (res.status !== 204) failed.push(`${id}: HTTP ${res.status}`)
    }
  }))
  const dataDir = server.dataDir
  await server.stop({ timeoutMs: 180_000 })
  const left = []
  if (run('ip', ['netns', 'list']).split('\n').some((l) => l.startsWith(names.AENV_BACKEND_NAME_PREFIX))) left.push('netns')
  if (readFileSync('/proc/self/mountinfo', 'utf8').split('\n').some((l) => l.includes(dataDir) || l.includes(names.AENV_BACKEND_RUN_DIR))) left.push('mounts')
  if (run('losetup', ['-a']).includes(dataDir)) left.push('loop devices')
  console.log(failed.length ? `delete failed: ${failed.join(', ')}` : `deleted ${ids.length}`)
  console.log(left.length ? `LEFT BEHIND: ${left.join(', ')}` : 'nothing left behind (netns, mounts, loop devices)')
  if (left.length || failed.length) exitCode = 1
  for (const controller of readdirSync(CG)) { // the empty parents the backend created
    try { rmdirSync(join(CG, controller, names.AENV_BACKEND_CGROUP_PARENT)) } catch { /* not there or busy */ }
  }
}
process.exit(exitCode)
