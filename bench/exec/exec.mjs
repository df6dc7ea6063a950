// Where the time of commands.run('true') on a running sandbox goes, through the container backend and the server
// jar on loopback. One sandbox; every round runs each variant 10 times back to back (as a user's consecutive commands
// run), variants in the same order, so load drifts hit all of them:
//   sdk/proxy     the npm `e2b` SDK through the server's sandbox proxy (what users see; the exec row of docs/benchmarks.md's targets)
//   sdk/direct    the same SDK pointed straight at envd on the sandbox's veth (sandboxUrl), no proxy
//   raw/proxy     the SDK's exact Connect request (JSON envelopes) by node:http on a keep-alive connection, via proxy
//   raw/direct    the same, straight at envd
//   raw/direct bash -c, /bin/true   the same without the login shell, and without any shell
//   raw/direct List  a unary Connect round trip to envd (the transport's floor)
// The raw rows are split by the time their frames arrive: start event, end event, end of stream.
// Also reports CPU time per exec (load-insensitive, unlike wall time): the whole sandbox's (its cgroup's cpuacct: envd
// plus every process the command started), envd's JVM alone and the server's JVM (from /proc), and the client's.
// Needs root, scripts/setup-host.sh and the built jars (envd, server, container backend):
//   mvn -B -q -pl agentenv-server,agentenv-envd,agentenv-backend-container -am package -DskipTests
//   node bench/exec/exec.mjs [samples per variant]          (default 200)
// The server runs with serve.sh's JVM options (BENCH_SERVER_JVM=test: the e2e harness's C1-only ones). A/B runs:
//   AENV_BACKEND_ENVD_DIR=<other envd build> AENV_BACKEND_HOST_ENV=<host.env naming another templates dir> node ...
import { request, Agent } from 'node:http'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startServer, repoRoot, SERVE_JVM_OPTIONS } from '../../e2e/lib/control-plane-harness.mjs'
import { claimLane, laneEnv, LAYOUTS } from '../lib/lane.mjs'

const samplesPerVariant = Number(process.argv[2] ?? 200)
const block = 10
const rounds = Math.ceil(samplesPerVariant / block)
const warmup = 3
delete process.env.E2B_DEBUG
// BENCH_SERVER_JVM=test runs the server with the e2e harness's quick-start options (C1 only) instead of serve.sh's.
const names = laneEnv(await claimLane(), LAYOUTS.exec) // concurrent bench runs never share names
const server = await startServer({
  backend: 'container',
  readyTimeoutMs: 120_000,
  jvmOptions: process.env.BENCH_SERVER_JVM === 'test' ? undefined : SERVE_JVM_OPTIONS,
  env: {
    // another envd build or template cache (A/B runs): AENV_BACKEND_ENVD_DIR, AENV_BACKEND_HOST_ENV
    ...(process.env.AENV_BACKEND_HOST_ENV ? { AENV_BACKEND_HOST_ENV: process.env.AENV_BACKEND_HOST_ENV } : {}),
    ...names,
    AENV_BACKEND_MAX_SANDBOXES: '4',
    AENV_BACKEND_CPU_COUNT: '1',
    AENV_BACKEND_MEMORY_MB: '512',
    AENV_BACKEND_POOL_SIZE: '0',
    AENV_BACKEND_ENVD_DIR: process.env.AENV_BACKEND_ENVD_DIR ?? join(repoRoot, 'agentenv-envd', 'target'),
  },
})
const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 60_000 }

function envelope(json) {
  const body = Buffer.from(JSON.stringify(json))
  const frame = Buffer.alloc(5 + body.length)
  frame.writeUInt32BE(body.length, 1)
  body.copy(frame, 5)
  return frame
}

/** One server-streaming Connect call; resolves with the arrival times (ms from the start) of its frames. */
function stream(target, path, headers, message) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const marks = {}
    const req = request({ ...target, method: 'POST', path, headers: {
      ...headers, 'content-type': 'application/connect+json', 'connect-protocol-version': '1',
    } }, (res) => {
      let buf = Buffer.alloc(0)
      res.on('data', (d) => {
        buf = Buffer.concat([buf, d])
        while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32BE(1)) {
          const flags = buf[0]
          const msg = JSON.parse(buf.subarray(5, 5 + buf.readUInt32BE(1)).toString() || '{}')
          buf = buf.subarray(5 + buf.readUInt32BE(1))
          const t = performance.now() - t0
          if (flags & 2) {
            marks.eos = t
            if (msg.error) reject(new Error(JSON.stringify(msg.error)))
          } else if (msg.event?.start) marks.start ??= t
          else if (msg.event?.end) {
            marks.end = t
            if (msg.event.end.exitCode) reject(new Error(`exit ${msg.event.end.exitCode}`))
          }
        }
      })
      res.on('end', () => {
        marks.done = performance.now() - t0
        if (res.statusCode !== 200) reject(new Error(`${path} -> ${res.statusCode}`))
        else resolve(marks)
      })
    })
    req.on('error', reject)
    req.end(envelope(message))
  })
}

function unary(target, path, headers, message) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = request({ ...target, method: 'POST', path, headers: {
      ...headers, 'content-type': 'application/json', 'connect-protocol-version': '1',
    } }, (res) => {
      res.on('data', () => {})
      res.on('end', () => (res.statusCode === 200 ? resolve({ done: performance.now() - t0 }) : reject(new Error(`${res.statusCode}`))))
    })
    req.on('error', reject)
    req.end(JSON.stringify(message))
  })
}

const pct = (s, p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]
function summary(values) {
  const s = [...values].sort((a, b) => a - b)
  return `p50 ${pct(s, 0.5).toFixed(2).padStart(6)}  p95 ${pct(s, 0.95).toFixed(2).padStart(6)}`
}

/** CPU time (ms) used so far by everything in the sandbox cgroups under the bench's parent (one sandbox). */
function sandboxCpuMs() {
  return Number(readFileSync(`/sys/fs/cgroup/cpuacct/${names.AENV_BACKEND_CGROUP_PARENT}/cpuacct.usage`, 'utf8')) / 1e6
}

/** CPU time (ms) of a process, from /proc (utime+stime in ticks; children excluded). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

try {
  const sbx = await Sandbox.create('base', { ...opts, timeoutMs: 3_600_000 })
  const ip = (await sbx.commands.run('hostname -I')).stdout.trim().split(/\s+/)[0]
  const envdPid = Number(execFileSync('sh', ['-c',
    `for p in $(cat /sys/fs/cgroup/pids/${names.AENV_BACKEND_CGROUP_PARENT}/*/cgroup.procs); do case $(readlink /proc/$p/exe) in */bin/java) echo $p;; esac; done`])
    .toString().trim().split('\n')[0])
  const direct = await Sandbox.connect(sbx.sandboxId, { ...opts, sandboxUrl: `http://${ip}:49983` })
  const token = sbx.envdAccessToken
  const auth = { Authorization: 'Basic ' + Buffer.from('user:').toString('base64'), ...(token ? { 'X-Access-Token': token } : {}) }
  const route = { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983' }
  const proxyTarget = { host: '127.0.0.1', port: server.port, agent: new Agent({ keepAlive: true, maxSockets: 1 }) }
  const directTarget = { host: ip, port: 49983, agent: new Agent({ keepAlive: true, maxSockets: 1 }) }
  const start = (cmd, args) => ({ process: { cmd, args }, stdin: false })
  const ping = { 'Keepalive-Ping-Interval': '50' }
  const variants = [
    ['sdk/proxy   bash -l -c true', async () => { const t0 = performance.now(); await sbx.commands.run('true'); return { done: performance.now() - t0 } }],
    ['sdk/direct  bash -l -c true', async () => { const t0 = performance.now(); await direct.commands.run('true'); return { done: performance.now() - t0 } }],
    ['raw/proxy   bash -l -c true', () => stream(proxyTarget, '/process.Process/Start', { ...auth, ...route, ...ping }, start('/bin/bash', ['-l', '-c', 'true']))],
    ['raw/direct  bash -l -c true', () => stream(directTarget, '/process.Process/Start', { ...auth, ...ping }, start('/bin/bash', ['-l', '-c', 'true']))],
    ['raw/direct  bash -c true', () => stream(directTarget, '/process.Process/Start', { ...auth, ...ping }, start('/bin/bash', ['-c', 'true']))],
    ['raw/direct  /bin/true', () => stream(directTarget, '/process.Process/Start', { ...auth, ...ping }, start('/bin/true', []))],
    ['raw/proxy   List (unary)', () => unary(proxyTarget, '/process.Process/List', { ...auth, ...route }, {})],
    ['raw/direct  List (unary)', () => unary(directTarget, '/process.Process/List', auth, {})],
  ]
  const samples = new Map(variants.map(([name]) => [name, []]))
  const cpu = new Map(variants.map(([name]) => [name, 0]))
  const serverCpu = new Map(variants.map(([name]) => [name, 0]))
  const sandboxCpu = new Map(variants.map(([name]) => [name, 0]))
  const nodeCpu = new Map(variants.map(([name]) => [name, 0]))
  for (let r = 0; r < warmup + rounds; r++) {
    for (const [name, run] of variants) {
      const c0 = cpuMs(envdPid)
      const s0 = cpuMs(server.pid)
      const b0 = sandboxCpuMs()
      const u0 = process.cpuUsage()
      const marks = []
      for (let i = 0; i < block; i++) marks.push(await run())
      const u = process.cpuUsage(u0)
      if (r >= warmup) {
        samples.get(name).push(...marks)
        cpu.set(name, cpu.get(name) + cpuMs(envdPid) - c0)
        serverCpu.set(name, serverCpu.get(name) + cpuMs(server.pid) - s0)
        sandboxCpu.set(name, sandboxCpu.get(name) + sandboxCpuMs() - b0)
        nodeCpu.set(name, nodeCpu.get(name) + (u.user + u.system) / 1000)
      }
    }
  }
  const n = rounds * block
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  console.log(`${new Date().toISOString()}  n=${n} per variant (${rounds} rounds of ${block}, +${warmup} warm-up rounds)  load ${load}`)
  for (const [name] of variants) {
    const s = samples.get(name)
    const parts = [`total ${summary(s.map((m) => m.done))}`]
    if (s[0].start !== undefined) {
      parts.push(`start-event ${summary(s.map((m) => m.start))}`)
      parts.push(`start→end ${summary(s.map((m) => m.end - m.start))}`)
      parts.push(`end→done ${summary(s.map((m) => m.done - m.end))}`)
    }
    parts.push(`sandbox cpu ${(sandboxCpu.get(name) / n).toFixed(2)} ms`, `envd cpu ${(cpu.get(name) / n).toFixed(2)} ms`, `server cpu ${(serverCpu.get(name) / n).toFixed(2)} ms`, `node cpu ${(nodeCpu.get(name) / n).toFixed(2)} ms`)
    console.log(`${name.padEnd(28)} ${parts.join(' | ')}`)
  }
  await sbx.kill()
} finally {
  await server.stop({ timeoutMs: 120_000 })
}
