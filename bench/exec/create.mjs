// Where Sandbox.create's time goes on a warm pool: sequential creates (a pause between them lets the pool refill, as
// between users' creates; each followed by the new sandbox's first commands.run('true'), timed apart) and a 20-way burst, timed by the npm `e2b` SDK through the server jar on loopback, with the
// server's own per-step timings for each create (its "sandbox started" and "container sandbox started" log lines:
// load-insensitive compared with wall time) and the server's CPU time per create (from /proc).
// Needs root, scripts/setup-host.sh and the built jars (see bench/exec/exec.mjs):
//   node bench/exec/create.mjs [creates]          (default 30)
// AENV_BENCH_SERVER_LOG=<file> keeps the server's log there. BENCH_SERVER_JVM=test runs the server with the e2e
// harness's C1-only options instead of serve.sh's.
import { join } from 'node:path'
import { readFileSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startServer, repoRoot, SERVE_JVM_OPTIONS } from '../../e2e/lib/control-plane-harness.mjs'
import { claimLane, laneEnv, LAYOUTS } from '../lib/lane.mjs'

const n = Number(process.argv[2] ?? 30)
delete process.env.E2B_DEBUG
const names = laneEnv(await claimLane(), LAYOUTS.sdk)
const server = await startServer({
  backend: 'container',
  readyTimeoutMs: 120_000,
  jvmOptions: process.env.BENCH_SERVER_JVM === 'test' ? undefined : SERVE_JVM_OPTIONS,
  env: {
    ...names,
    AENV_BACKEND_MAX_SANDBOXES: '48',
    AENV_BACKEND_CPU_COUNT: '1',
    AENV_BACKEND_MEMORY_MB: '512',
    AENV_BACKEND_POOL_SIZE: process.env.AENV_BACKEND_POOL_SIZE ?? '2',
    AENV_BACKEND_ENVD_DIR: process.env.AENV_BACKEND_ENVD_DIR ?? join(repoRoot, 'agentenv-envd', 'target'),
  },
})
const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 }
const cpuMs = () => {
  const f = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}
const pct = (s, p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]
function summary(values) {
  const s = [...values].sort((a, b) => a - b)
  return `p50 ${pct(s, 0.5).toFixed(1).padStart(6)}  p95 ${pct(s, 0.95).toFixed(1).padStart(6)}  max ${s.at(-1).toFixed(1).padStart(6)}`
}
/** The key=value pairs of the server's log lines with `message`, for the given sandbox ids, in log order. */
function steps(message, ids) {
  const out = []
  for (const line of server.output().split('\n')) {
    if (!line.includes(` ${message} `)) continue
    const kv = Object.fromEntries([...line.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]))
    if (ids.has(kv.sandbox_id)) out.push(kv)
  }
  return out
}
function stepTable(ids) {
  for (const message of (process.env.BENCH_STEPS ?? 'Launcher sandbox started|GenerationStart container sandbox started').split('|')) {
    const rows = steps(message, ids)
    const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => k.endsWith('_ms'))
    for (const k of keys) {
      const v = rows.map((r) => Number(r[k])).filter((x) => !Number.isNaN(x))
      if (v.length) console.log(`  server "${message}" ${k.padEnd(14)} n=${String(v.length).padStart(3)}  ${summary(v)}`)
    }
  }
}

try {
  for (let i = 0; i < 4; i++) await (await Sandbox.create('base', opts)).kill() // template image, pool, JIT
  const seq = []
  const first = []
  const seqIds = new Set()
  let cpu = 0
  for (let i = 0; i < n; i++) {
    await sleep(500)
    const c0 = cpuMs()
    const t0 = performance.now()
    const sbx = await Sandbox.create('base', opts)
    seq.push(performance.now() - t0)
    cpu += cpuMs() - c0
    seqIds.add(sbx.sandboxId)
    const t1 = performance.now()
    await sbx.commands.run('true') // the rest of time to interactive: the new sandbox's first command
    first.push(performance.now() - t1)
    await sbx.kill()
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  console.log(`${new Date().toISOString()}  load ${load}`)
  console.log(`Sandbox.create, sequential (pool 2)      n=${String(n).padStart(3)}  ${summary(seq)}  server CPU ${(cpu / n).toFixed(1)} ms per create`)
  console.log(`its first commands.run('true')             n=${String(n).padStart(3)}  ${summary(first)}`)
  console.log(`time to interactive (the two added)        n=${String(n).padStart(3)}  ${summary(seq.map((v, i) => v + first[i]))}`)
  stepTable(seqIds)

  await sleep(2000)
  const burst = []
  const t0 = performance.now()
  const many = await Promise.all(Array.from({ length: 20 }, async () => {
    const t1 = performance.now()
    const sbx = await Sandbox.create('base', opts)
    burst.push(performance.now() - t1)
    return sbx
  }))
  console.log(`Sandbox.create, 20-way burst (each)      n= 20  ${summary(burst)}  all after ${(performance.now() - t0).toFixed(0)} ms`)
  stepTable(new Set(many.map((s) => s.sandboxId)))
  await Promise.all(many.map((s) => s.kill()))
} finally {
  if (process.env.AENV_BENCH_SERVER_LOG) writeFileSync(process.env.AENV_BENCH_SERVER_LOG, server.output())
  await server.stop({ timeoutMs: 120_000 })
}
