// envd footprint benchmark: time from process start to the first GET /health 204, idle RSS, and RSS with 10
// running processes (each attached through an open Start stream, as the SDK's background commands are).
//
//   node bench/envd/footprint.mjs [--runs N] [--no-aot]
//
// Needs the built jar (mvn -B -pl agentenv-envd -am package); uses agentenv-envd/target/envd.aot when present.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { envdCommand, envdAotCache } from '../../e2e/lib/envd-harness.mjs'
import { existsSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'

const args = process.argv.slice(2)
const runs = Number(args[args.indexOf('--runs') + 1]) > 0 && args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 10
const useAot = !args.includes('--no-aot') && existsSync(envdAotCache)
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

// user + system CPU time of the process so far (clock ticks of 10 ms): start-up work independent of machine load
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
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
  const jvm = useAot ? argv : argv.filter((a) => !a.startsWith('-XX:AOTCache='))
  const t0 = process.hrtime.bigint()
  const child = spawn(java, jvm, { stdio: ['ignore', 'ignore', 'inherit'] })
  for (;;) {
    if (await health(on)) break
    if (child.exitCode !== null) throw new Error('envd exited')
    await delay(1)
  }
  const readyMs = Number(process.hrtime.bigint() - t0) / 1e6
  return { child, readyMs, cpuMs: cpuMs(child.pid) }
}

async function stop(child) {
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
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
const cpu = []
const idle = []
const idlePrivate = []
let withProcesses = 0
let secondPrivate = 0
for (let i = 0; i < runs; i++) {
  const { child, readyMs, cpuMs: used } = await startEnvd()
  ready.push(readyMs)
  cpu.push(used)
  await delay(2000)
  idle.push(rssKiB(child.pid))
  idlePrivate.push(privateKiB(child.pid))
  if (i === runs - 1) {
    // a second envd next to the first: its private memory is what one more sandbox costs (the JDK and the AOT
    // cache are shared page cache between them)
    const second = await startEnvd(await freePort())
    await delay(2000)
    secondPrivate = privateKiB(second.child.pid)
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
  startToReadyMs: { min: Math.min(...ready).toFixed(1), median: median(ready).toFixed(1), max: Math.max(...ready).toFixed(1) },
  cpuUntilReadyMs: { min: Math.min(...cpu), median: median(cpu) },
  idleRssMiB: { min: (Math.min(...idle) / 1024).toFixed(1), median: (median(idle) / 1024).toFixed(1) },
  idlePrivateMiBAlone: (median(idlePrivate) / 1024).toFixed(1),
  idlePrivateMiBNextToAnother: (secondPrivate / 1024).toFixed(1),
  rssWith10ProcessesMiB: (withProcesses / 1024).toFixed(1),
}, null, 2))
