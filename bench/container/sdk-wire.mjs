// What the unmodified npm `e2b` SDK spends, and sends and receives, in the 20-way burst of sdk.mjs (Sandbox.create +
// commands.run('true') twenty at once against a warm pool as large as the burst): the SDK's Node CPU (process.cpuUsage
// around the burst only), the TCP connections it opened, the HTTP requests it made (method, path, status, response
// headers), the bytes and socket reads/writes (undici's and Node's diagnostics channels: nothing is patched), and the
// server JVM's CPU by thread. Each of `rounds` bursts is preceded by a settle (the pool refills to 20) and followed
// by the kills. The server's CPU: /proc's total in 10 ms ticks, and its threads' schedstat (ns; threads that ended
// inside the burst left out) summed and by thread name. With AENV_BENCH_CPU_PROFILE=<file> the SDK's Node is profiled during the last burst only (V8's
// sampling profiler through node:inspector, 100 us interval) and the profile's self time by function is printed.
// With AENV_BENCH_PCAP=<file> tcpdump (Debian's package) captures the server port's loopback traffic of the whole run
// there (read it with `tcpdump -r <file> -nn -tt`: segments per connection, how a Start response is framed).
// AENV_BENCH_PERF=<file> records the server with `perf record -g` (Debian's linux-perf) during each burst into
// <file>.<round> and has the JVM write its JIT's perf map (/tmp/perf-<pid>.map) at the end; the perf run's own start
// is outside the burst (it attaches a second before), its sampling cost inside.
// AENV_BENCH_SERVER_LOG=<file> keeps the server's log there (appended, so an A/B loop keeps every run's).
// AENV_BENCH_BURST_WINDOWS=<file> appends each burst's start and end there, a line each: epoch ms and CLOCK_MONOTONIC
// ns (`start,end,monoStart,monoEnd`), to cut a server-side profile (a JFR recording through BENCH_SERVER_JVM_EXTRA:
// bench/container/jfr-bursts.py) or a JIT log (-Xlog:jit+compilation=debug:file=<f>:timenanos) to the bursts.
//   AENV_BACKEND_POOL_SIZE=20 node bench/container/sdk-wire.mjs [rounds=5] [settle-ms=20000]
// Needs what sdk.mjs needs (root, scripts/setup-host.sh, the built jars); claims an sdk bench lane.
import diagnostics from 'node:diagnostics_channel'
import { spawn } from 'node:child_process'
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startBenchServer } from '../lib/container-server.mjs'
import { claimLane, LAYOUTS } from '../lib/lane.mjs'
import { threadCpuMs } from '../lib/proc.mjs'

const rounds = Number(process.argv[2] ?? 5)
const settleMs = Number(process.argv[3] ?? 20_000)
const poolSize = Number(process.env.AENV_BACKEND_POOL_SIZE ?? 20)
const profileFile = process.env.AENV_BENCH_CPU_PROFILE
const perfFile = process.env.AENV_BENCH_PERF
delete process.env.E2B_DEBUG

// The wire as the SDK's HTTP client sees it; counted only while `recording` (the burst), so set-up is left out.
let recording = false
const wire = { connections: 0, requests: [], sockets: new Set() }
diagnostics.subscribe('undici:client:connected', () => { if (recording) wire.connections++ })
diagnostics.subscribe('undici:request:create', ({ request }) => {
  if (recording) wire.requests.push({ method: request.method, path: request.path.split('?')[0], status: 0, headers: '' })
  request.__wire = recording ? wire.requests.at(-1) : undefined
})
diagnostics.subscribe('undici:request:headers', ({ request, response }) => {
  const r = request.__wire
  if (!r) return
  r.status = response.statusCode
  const h = response.headers.map(String)
  r.headers = h.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase()).sort().join(',')
})
diagnostics.subscribe('net.client.socket', ({ socket }) => { if (recording) wire.sockets.add(socket) })

const lane = await claimLane()
const server = await startBenchServer(lane, LAYOUTS.sdk, { poolSize })
const pcap = process.env.AENV_BENCH_PCAP
  ? spawn('tcpdump', ['-i', 'lo', '-U', '-s', '512', '-w', process.env.AENV_BENCH_PCAP, `tcp port ${server.port}`], { stdio: 'ignore' })
  : undefined
const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 }
const threads = () => threadCpuMs(server.pid, (tid, name) => name.replace(/(?<!^C)\d+/g, '#'))
const serverCpu = () => {
  const f = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

/** Self time (ms) by function and script of a V8 CPU profile, the top `top`. */
function selfTime(profile, top = 25) {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]))
  const spent = new Map()
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byNode.get(profile.samples[i])
    const f = node.callFrame
    const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\//, '')}:${f.lineNumber + 1}`
    spent.set(key, (spent.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000)
  }
  return [...spent].sort((a, b) => b[1] - a[1]).slice(0, top)
}

try {
  for (let i = 0; i < 4; i++) await (await Sandbox.create('base', opts)).kill() // template image, JIT of the SDK path
  for (let round = 1; round <= rounds; round++) {
    await sleep(settleMs) // the pool refills to its size
    const profiling = profileFile && round === rounds
    const inspector = profiling ? new Session() : undefined
    if (profiling) {
      inspector.connect()
      await inspector.post('Profiler.enable')
      await inspector.post('Profiler.setSamplingInterval', { interval: 100 })
      await inspector.post('Profiler.start')
    }
    // perf of the server during this burst only (JIT frames named by `jcmd <pid> Compiler.perfmap` at the end)
    const perf = perfFile ? spawn('perf', ['record', '-q', '-F', '4999', '-g', '-p', String(server.pid), '-o',
      `${perfFile}.${round}`], { stdio: 'ignore' }) : undefined
    if (perf) await sleep(1000) // attached
    wire.connections = 0
    wire.requests = []
    wire.sockets = new Set()
    const loadBefore = load()
    const threads0 = threads()
    const server0 = serverCpu()
    const cpu0 = process.cpuUsage()
    recording = true
    const t0 = performance.now()
    const wall0 = Date.now()
    const mono0 = process.hrtime.bigint()
    const tti = []
    const many = await Promise.all(Array.from({ length: 20 }, async () => {
      const s0 = performance.now()
      const sbx = await Sandbox.create('base', opts)
      await sbx.commands.run('true')
      tti.push(performance.now() - s0)
      return sbx
    }))
    const all = performance.now() - t0
    recording = false
    if (process.env.AENV_BENCH_BURST_WINDOWS) {
      appendFileSync(process.env.AENV_BENCH_BURST_WINDOWS, `${wall0},${Date.now()},${mono0},${process.hrtime.bigint()}\n`)
    }
    if (perf) await new Promise((resolve) => { perf.on('exit', resolve); perf.kill('SIGINT') })
    const cpu = process.cpuUsage(cpu0)
    const serverMs = serverCpu() - server0
    const threads1 = threads()
    const deltas = Object.entries(threads1).map(([k, v]) => [k, v - (threads0[k] ?? 0)]).filter(([, v]) => v >= 0.05)
    const threadsMs = deltas.reduce((sum, [, v]) => sum + v, 0)
    const byThread = deltas.filter(([, v]) => v >= 0.5)
      .sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')
    if (profiling) {
      const { profile } = await inspector.post('Profiler.stop')
      inspector.disconnect()
      writeFileSync(profileFile, JSON.stringify(profile))
    }
    let bytesOut = 0
    let bytesIn = 0
    for (const s of wire.sockets) { bytesOut += s.bytesWritten; bytesIn += s.bytesRead }
    tti.sort((a, b) => a - b)
    console.log(`round ${round}: load ${loadBefore}; p50 ${tti[9].toFixed(1)} p95 ${tti[18].toFixed(1)} all ${all.toFixed(0)} ms; ` +
      `SDK Node CPU ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms (user ${(cpu.user / 1000).toFixed(1)}, system ` +
      `${(cpu.system / 1000).toFixed(1)}); server JVM ${serverMs} ms (threads ${threadsMs.toFixed(1)}): ${byThread}`)
    const shapes = new Map()
    for (const r of wire.requests) {
      const key = `${r.method} ${r.path.replace(/\/sandboxes\/[^/]+/, '/sandboxes/{id}')} -> ${r.status} [${r.headers}]`
      shapes.set(key, (shapes.get(key) ?? 0) + 1)
    }
    console.log(`  wire: ${wire.connections} connections opened, ${wire.sockets.size} sockets, ${wire.requests.length} requests, ` +
      `${bytesOut} bytes out, ${bytesIn} bytes in (${(bytesOut / 20).toFixed(0)} / ${(bytesIn / 20).toFixed(0)} per sandbox)`)
    for (const [k, v] of shapes) console.log(`  ${v} x ${k}`)
    if (profiling) {
      console.log(`  SDK Node profile of this burst (${profileFile}), self time ms:`)
      for (const [k, v] of selfTime(JSON.parse(readFileSync(profileFile, 'utf8')))) console.log(`    ${v.toFixed(1).padStart(6)} ${k}`)
    }
    await Promise.all(many.map((s) => s.kill()))
  }
} finally {
  if (perfFile) { // the JIT's perf map, written before the server stops
    const jcmd = `${process.env.JAVA_HOME ?? '/usr/lib/jvm/temurin-25-jdk-amd64'}/bin/jcmd`
    await new Promise((resolve) => spawn(jcmd, [String(server.pid), 'Compiler.perfmap'], { stdio: 'ignore' }).on('exit', resolve))
  }
  if (process.env.AENV_BENCH_SERVER_LOG) appendFileSync(process.env.AENV_BENCH_SERVER_LOG, server.output())
  pcap?.kill('SIGINT')
  await server.stop({ timeoutMs: 120_000 })
}
