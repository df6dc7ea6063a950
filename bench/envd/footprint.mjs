// envd footprint benchmark: time from process start to the first GET /health 204, to the first process.Start
// answered (a `/bin/true` sent right after the first 204, its whole stream read), idle RSS/PSS/private memory, and
// RSS with 10 running processes (each attached through an open Start stream, as the SDK's background commands are).
// With --idle-seconds N (default 30) it also reports envd's CPU per thread over N idle seconds (schedstat, in ms).
//
//   node bench/envd/footprint.mjs [--runs N] [--no-aot] [--idle-seconds N] [--metrics-every S] [--node-poller]
//                                 [-- extra JVM options...]
//
// Start-up is timed by bench/envd/ready-probe.py (python3): it forks java and tries GET /health every 1 ms with a
// blocking connect that costs ~20 us of CPU when refused, and then sends the first Start; its clock starts right before
// the fork. --node-poller times it the older way, from this process (http.get every 1 ms: ~0.3-0.4 ms of node
// CPU per refused connect on the same 2 cores as the JVM, 20-65 ms until the 204); pollerCpuUntilReadyMs shows it.
//
// Needs the built jar (mvn -B -pl agentenv-envd -am package); uses agentenv-envd/target/envd.aot when present.
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readFileSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { envdCommand, envdAotCache } from '../../e2e/lib/envd-harness.mjs'
import { threadCpuMs } from '../lib/proc.mjs'
import { existsSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'

const args = process.argv.slice(2)
const runs = Number(args[args.indexOf('--runs') + 1]) > 0 && args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 10
const nodePoller = args.includes('--node-poller')
const readyProbe = join(dirname(fileURLToPath(import.meta.url)), 'ready-probe.py')
// Debian's python3 directly (a python3 earlier on PATH may be a shim that starts a shell first)
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'
const useAot = !args.includes('--no-aot') && existsSync(envdAotCache)
const idleSeconds = args.includes('--idle-seconds') ? Number(args[args.indexOf('--idle-seconds') + 1]) : 30
// --metrics-every S: during the idle window, GET /metrics every S seconds (the server samples every sandbox every 5 s)
const metricsEvery = args.includes('--metrics-every') ? Number(args[args.indexOf('--metrics-every') + 1]) : 0
// JVM options after `--` are added before -jar (to compare flags without rebuilding)
const extraJvm = args.includes('--') ? args.slice(args.indexOf('--') + 1) : []
// a free port chosen by the kernel (not 49983: the e2e suites may be using it)
async function freePort() {
  const server = net.createServer()
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const { port: free } = server.address()
  await new Promise((r) => server.close(r))
  return free
}
const port = await freePort()

function rssKiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1])
}

// private (not shared with other processes) memory: what each additional envd really costs when the JDK and the
// AOT cache are shared page cache
function privateKiB(pid) {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
  const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(rollup)[1])
  return field('Private_Clean') + field('Private_Dirty')
}

// proportional set size: shared pages divided among the processes mapping them
function pssKiB(pid) {
  return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))[1])
}

// user + system CPU time of the process so far (clock ticks of 10 ms): start-up work independent of machine load
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

function metrics(on = port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port: on, path: '/metrics', agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', () => resolve(0))
  })
}

function health(on = port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port: on, path: '/health', agent: false }, (res) => {
      res.resume()
      resolve(res.statusCode === 204)
    })
    req.on('error', () => resolve(false))
  })
}

async function startEnvd(on = port) {
  const [java, argv] = envdCommand(['--port', String(on), '--log-level', 'WARN'])
  const base = useAot ? argv : argv.filter((a) => !a.startsWith('-XX:AOTCache='))
  const jar = base.indexOf('-jar')
  const jvm = [...base.slice(0, jar), ...extraJvm, ...base.slice(jar)] // after jvm.options' flags, so they win
  return nodePoller ? startPolledByNode(on, java, jvm) : startPolledByProbe(on, java, jvm)
}

// ready-probe.py starts envd and polls it (~20 us of CPU per refused connect); the times are from its clock, taken
// right before its fork of java
async function startPolledByProbe(on, java, jvm) {
  const probe = spawn(python, [readyProbe, '--port', String(on), '--', java, ...jvm],
    { stdio: ['pipe', 'pipe', 'inherit'] })
  const events = []
  let waiting = null
  let buffered = ''
  probe.stdout.on('data', (d) => {
    buffered += d
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      events.push(JSON.parse(buffered.slice(0, nl)))
      buffered = buffered.slice(nl + 1)
      waiting?.()
    }
  })
  const next = async (name) => {
    for (;;) {
      const found = events.find((e) => e.event === name || e.event === 'exited')
      if (found) {
        if (found.event === 'exited') throw new Error(`envd exited with status ${found.status}`)
        return found
      }
      if (probe.exitCode !== null) throw new Error('ready-probe.py exited')
      await new Promise((r) => { waiting = r; setTimeout(r, 50) })
    }
  }
  const ready = await next('ready')
  const first = await next('firstStart')
  if (!first.ok) throw new Error('the first process.Start did not end with exit code 0')
  const child = { pid: ready.pid, exited: new Promise((r) => probe.once('exit', r)) }
  return { child, readyMs: ready.readyMs, cpuMs: ready.envdCpuMs, firstStartMs: first.firstStartMs, pollerCpuMs: ready.probeCpuMs }
}

// the older measurement: node's http.get every 1 ms (~0.3-0.4 ms of node CPU per refused connect, on
// the same 2 cores as envd); CPU until ready from /proc/PID/stat (10 ms ticks)
async function startPolledByNode(on, java, jvm) {
  const t0 = process.hrtime.bigint()
  const cpuBefore = process.cpuUsage()
  const spawned = spawn(java, jvm, { stdio: ['ignore', 'ignore', 'inherit'] })
  for (;;) {
    if (await health(on)) break
    if (spawned.exitCode !== null) throw new Error('envd exited')
    await delay(1)
  }
  const readyMs = Number(process.hrtime.bigint() - t0) / 1e6
  const pollerCpu = process.cpuUsage(cpuBefore)
  const readyCpuMs = cpuMs(spawned.pid)
  const exitCode = await runTrue(on)
  if (exitCode !== 0) throw new Error(`the first process.Start did not end with exit code 0: ${exitCode}`)
  const firstStartMs = Number(process.hrtime.bigint() - t0) / 1e6
  const child = { pid: spawned.pid, exited: new Promise((r) => spawned.once('exit', r)) }
  return { child, readyMs, cpuMs: readyCpuMs, firstStartMs, pollerCpuMs: (pollerCpu.user + pollerCpu.system) / 1000 }
}

// process.Start of /bin/true with its whole stream read; resolves to the exit code of the end event
function runTrue(on) {
  const body = Buffer.from(JSON.stringify({ process: { cmd: '/bin/true' }, stdin: false }))
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), body])
  frame.writeUInt32BE(body.length, 1)
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port: on, path: '/process.Process/Start', method: 'POST', agent: false,
      headers: { 'content-type': 'application/connect+json', 'content-length': frame.length },
    }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('latin1')
        const exit = /"exitCode":(-?\d+)/.exec(text)
        resolve(/"end":\{/.test(text) ? (exit ? Number(exit[1]) : 0) : `no end event (HTTP ${res.statusCode})`)
      })
    })
    req.on('error', reject)
    req.end(frame)
  })
}

async function stop(child) {
  process.kill(child.pid, 'SIGTERM')
  await child.exited
}

function openStream(cmd) {
  const body = Buffer.from(JSON.stringify({ process: { cmd: '/bin/bash', args: ['-l', '-c', cmd] }, stdin: false }))
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), body])
  frame.writeUInt32BE(body.length, 1)
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, path: '/process.Process/Start', method: 'POST', agent: false,
      headers: { 'content-type': 'application/connect+json', 'content-length': frame.length },
    }, (res) => {
      res.once('data', () => resolve({ req, res }))
    })
    req.on('error', reject)
    req.end(frame)
  })
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }

const ready = []
const firstStart = []
const cpu = []
const pollerCpu = []
const idlePss = []
let idleThreads = {}
let idleEndRss = 0
let idleEndPrivate = 0
const idle = []
const idlePrivate = []
let withProcesses = 0
let secondPrivate = 0
let secondPrivateLater = 0
for (let i = 0; i < runs; i++) {
  const { child, readyMs, cpuMs: used, firstStartMs, pollerCpuMs } = await startEnvd()
  pollerCpu.push(pollerCpuMs)
  ready.push(readyMs)
  firstStart.push(firstStartMs)
  cpu.push(used)
  await delay(2000)
  idle.push(rssKiB(child.pid))
  idlePrivate.push(privateKiB(child.pid))
  idlePss.push(pssKiB(child.pid))
  if (i === runs - 1) {
    if (idleSeconds > 0) {
      const before = threadCpuMs(child.pid)
      const until = Date.now() + idleSeconds * 1000
      while (metricsEvery > 0 && Date.now() + metricsEvery * 1000 <= until) {
        await delay(metricsEvery * 1000)
        if (await metrics() !== 200) throw new Error('GET /metrics failed')
      }
      await delay(Math.max(0, until - Date.now()))
      const after = threadCpuMs(child.pid)
      idleEndRss = rssKiB(child.pid)
      idleEndPrivate = privateKiB(child.pid)
      idleThreads = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)])
        .filter(([, v]) => v >= 0.05).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Number(v.toFixed(1))]))
    }
    // a second envd next to the first: its private memory is what one more sandbox costs (the JDK and the AOT
    // cache are shared page cache between them)
    const second = await startEnvd(await freePort())
    await delay(2000)
    secondPrivate = privateKiB(second.child.pid)
    // and once its native heap was trimmed (the chunk pool returns C1's arenas ~5 s after start, the trimmer runs
    // every 5 s)
    await delay(10_000)
    secondPrivateLater = privateKiB(second.child.pid)
    await stop(second.child)
    const streams = []
    for (let p = 0; p < 10; p++) streams.push(await openStream('sleep 300'))
    await delay(2000)
    withProcesses = rssKiB(child.pid)
    for (const s of streams) s.req.destroy()
  }
  await stop(child)
}

const model = os.cpus()[0]?.model ?? 'unknown'
console.log(JSON.stringify({
  date: new Date().toISOString(),
  loadAverage: os.loadavg().map((l) => l.toFixed(2)).join(' '),
  machine: `${os.cpus().length} x ${model}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.release()}`,
  aotCache: useAot,
  runs,
  jvmOptions: extraJvm.join(' '),
  startToReadyMs: { min: Math.min(...ready).toFixed(1), median: median(ready).toFixed(1), max: Math.max(...ready).toFixed(1) },
  startToFirstStartAnsweredMs: { min: Math.min(...firstStart).toFixed(1), median: median(firstStart).toFixed(1), max: Math.max(...firstStart).toFixed(1) },
  poller: nodePoller ? 'node http.get every 1 ms' : 'ready-probe.py every 1 ms',
  cpuUntilReadyMs: { min: Math.min(...cpu).toFixed(1), median: median(cpu).toFixed(1) },
  pollerCpuUntilReadyMs: { min: Math.min(...pollerCpu).toFixed(1), median: median(pollerCpu).toFixed(1) },
  idleRssMiB: { min: (Math.min(...idle) / 1024).toFixed(1), median: (median(idle) / 1024).toFixed(1) },
  idlePssMiBAlone: (median(idlePss) / 1024).toFixed(1),
  idlePrivateMiBAlone: (median(idlePrivate) / 1024).toFixed(1),
  idlePrivateMiBNextToAnother: (secondPrivate / 1024).toFixed(1),
  idlePrivateMiBNextToAnotherAfter12s: (secondPrivateLater / 1024).toFixed(1),
  rssWith10ProcessesMiB: (withProcesses / 1024).toFixed(1),
  idleCpu: idleSeconds > 0 ? {
    seconds: idleSeconds,
    metricsEverySeconds: metricsEvery,
    rssAtEndMiB: (idleEndRss / 1024).toFixed(1),
    privateAtEndMiB: (idleEndPrivate / 1024).toFixed(1),
    percentOfOneCpu: (Object.values(idleThreads).reduce((a, b) => a + b, 0) / idleSeconds / 10).toFixed(3),
    msPerThread: idleThreads,
  } : null,
}, null, 2))
