// envd start-up, phase by phase: where the time from spawning the JVM to the first GET /health 204 goes, with
// evidence that does not depend much on the machine's load (JVM-internal timestamps, CPU time per thread).
//
//   node bench/envd/startup-phases.mjs [--runs N] [--rt] [--poll-ms N] [--builds DIR,DIR...] [-- extra JVM options...]
//
// --builds: several envd builds (directories holding agentenv-envd.jar, jvm.options and envd.aot, e.g. one built
// from `git archive main` and agentenv-envd/target), started in turn (A B A B ...) so that a changing machine load
// affects them alike; one result per build. Default: agentenv-envd/target (or AENV_ENVD_DIR).
//
// Per start:
//   spawn → JVM created   -Xlog:startuptime's "Create VM" (JVM uptime at its end) plus the launcher before it
//   → main                 the wall clock of `main`'s first line (envd's "envd listening" log line minus startup_ms)
//   main → listening       envd's listening_ms (its port bound; builds before it had none: then = serving)
//   main → serving         envd's serving_ms (wired: requests are served from then on; builds before it had none:
//                          then = the "envd listening" line)
//   serving → 204 seen     the first request's answer, as the poller sees it
//   204 → first Start       a `/bin/true` process.Start sent right after the 204, its whole stream read
// and the time every envd thread had been on a CPU (/proc/.../schedstat) at the moment the 204 arrived.
// Wall times are from this process's clock and envd's (the same host clock). --rt runs envd under `chrt -r 10`
// (real-time round robin: other processes cannot take its cores, the closest to a quiet machine on a shared
// one) and this poller at real-time priority 20 (above envd, so it is never starved by envd's own threads). The
// poller: a raw TCP connect + `GET /health` every --poll-ms (default 1) ms; a refused connect costs it ~0.3-0.4 ms of
// CPU; its own CPU use until the 204 is reported (it shares the 2 cores with envd).
import { spawn, execFileSync } from 'node:child_process'
import { readFileSync, existsSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import net from 'node:net'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { repoRoot } from '../../e2e/lib/envd-harness.mjs'
import { threadCpuMs } from '../lib/proc.mjs'
import { freePort } from '../../e2e/lib/control-plane-harness.mjs'
import { healthStatus } from '../lib/envd-probe.mjs'

const args = process.argv.slice(2)
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback)
const runs = option('--runs', 10)
const pollMs = option('--poll-ms', 1)
const realtime = args.includes('--rt')
const extraJvm = args.includes('--') ? args.slice(args.indexOf('--') + 1) : []
const builds = args.includes('--builds')
  ? args[args.indexOf('--builds') + 1].split(',').map((d) => resolve(d))
  : [process.env.AENV_ENVD_DIR || join(repoRoot, 'agentenv-envd', 'target')]
const java = join(process.env.JAVA_HOME || '/usr/lib/jvm/temurin-25-jdk-amd64', 'bin', 'java')

// the command line every launcher of envd uses: java @jvm.options -XX:AOTCache=envd.aot -jar agentenv-envd.jar
function envdArgs(dir, extraArgs) {
  const options = readFileSync(join(dir, 'jvm.options'), 'utf8').split('\n').map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
  const cache = join(dir, 'envd.aot')
  return [...options, ...(existsSync(cache) ? [`-XX:AOTCache=${cache}`] : []), '-Xlog:startuptime:stderr:uptime',
    ...extraJvm, '-jar', join(dir, 'agentenv-envd.jar'), ...extraArgs]
}

// --rt: envd at real-time priority 10, this poller above it at 20 (it must never wait for envd's threads to see the 204)
if (realtime) execFileSync('chrt', ['-r', '-p', '20', String(process.pid)])

const wallMs = () => performance.timeOrigin + performance.now()

// process.Start of /bin/true, the whole stream read; resolves to true when the end event came with exit code 0
function runTrue(port) {
  const body = Buffer.from(JSON.stringify({ process: { cmd: '/bin/true' }, stdin: false }))
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), body])
  frame.writeUInt32BE(body.length, 1)
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, noDelay: true })
    let text = ''
    socket.on('connect', () => {
      socket.write('POST /process.Process/Start HTTP/1.1\r\nHost: envd\r\nConnection: close\r\n'
        + `Content-Type: application/connect+json\r\nContent-Length: ${frame.length}\r\n\r\n`)
      socket.write(frame)
    })
    socket.on('data', (d) => { text += d.toString('latin1') })
    socket.on('error', reject)
    socket.on('close', () => resolve(/"end":\{/.test(text) && !/"exitCode":[1-9]/.test(text)))
  })
}

async function once(dir) {
  const port = await freePort()
  const jvm = envdArgs(dir, ['--port', String(port), '--log-level', 'INFO'])
  const [command, commandArgs] = realtime ? ['chrt', ['-r', '10', java, ...jvm]] : [java, jvm]
  const pollCpuBefore = process.cpuUsage()
  const t0 = wallMs()
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  let polls = 0
  for (;;) {
    polls++
    if (await healthStatus(port) === 204) break
    if (child.exitCode !== null) throw new Error(`envd exited:\n${stderr}`)
    if (pollMs > 0) await delay(pollMs)
  }
  const ready = wallMs() - t0
  const pollCpu = process.cpuUsage(pollCpuBefore)
  // virtual-thread carriers and similar pools: one row per name without its number
  const cpu = threadCpuMs(child.pid, (tid, name) => name.replace(/[-#]?\d+$/, ''))
  if (!await runTrue(port)) throw new Error(`the first Start did not end with exit code 0:\n${stderr}`)
  const firstStart = wallMs() - t0
  await delay(100)
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
  const createVm = Number(/^\[([\d.]+)s\] Create VM/m.exec(stderr)?.[1] ?? NaN) * 1000
  const line = /^(\S+Z) INFO Main .*envd listening.* startup_ms=(\d+)/m.exec(stderr)
  if (!line) throw new Error(`no "envd listening" line:\n${stderr}`)
  const logged = Date.parse(line[1]) + Number(line[1].slice(23, -1).padEnd(6, '0').slice(0, 6)) / 1e6 - t0
  const main = logged - Number(line[2])
  const servingMs = /envd listening.* serving_ms=(\d+)/m.exec(stderr)?.[1]
  const serving = servingMs === undefined ? logged : main + Number(servingMs)
  const listeningMs = /envd listening.* listening_ms=(\d+)/m.exec(stderr)?.[1]
  const listening = listeningMs === undefined ? serving : main + Number(listeningMs)
  return {
    createVm, main, listening, serving, ready, firstStart, polls,
    pollCpuMs: (pollCpu.user + pollCpu.system) / 1000,
    cpuMs: Object.values(cpu).reduce((a, b) => a + b, 0),
    threads: cpu,
  }
}

const results = new Map(builds.map((dir) => [dir, []]))
for (let i = 0; i < runs; i++) {
  for (const dir of builds) results.get(dir).push(await once(dir))
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const stats = (xs) => `${Math.min(...xs).toFixed(1)} / ${median(xs).toFixed(1)} / ${Math.max(...xs).toFixed(1)}`

function summary(dir, rows) {
  const column = (name) => rows.map((r) => r[name])
  const threadNames = [...new Set(rows.flatMap((r) => Object.keys(r.threads)))]
  const perThread = Object.fromEntries(threadNames
    .map((n) => [n, median(rows.map((r) => r.threads[n] ?? 0))])
    .filter(([, v]) => v >= 0.5).sort((a, b) => b[1] - a[1]).map(([n, v]) => [n, Number(v.toFixed(1))]))
  return {
    build: dir,
    aotCache: existsSync(join(dir, 'envd.aot')),
    'min / median / max (ms since spawn)': {
      'JVM created (Create VM, JVM uptime)': stats(column('createVm')),
      'main entered': stats(column('main')),
      'listening': stats(column('listening')),
      'serving': stats(column('serving')),
      'first /health 204': stats(column('ready')),
      'first Start answered': stats(column('firstStart')),
    },
    'min / median / max (ms)': {
      'main -> listening': stats(rows.map((r) => r.listening - r.main)),
      'main -> serving': stats(rows.map((r) => r.serving - r.main)),
      'serving -> 204': stats(rows.map((r) => r.ready - r.serving)),
      'envd CPU until the 204': stats(column('cpuMs')),
      'poller CPU until the 204': stats(column('pollCpuMs')),
      'polls': stats(column('polls')),
    },
    'envd CPU until the 204 per thread (median ms)': perThread,
  }
}

console.log(JSON.stringify({
  date: new Date().toISOString(),
  loadAverage: os.loadavg().map((l) => l.toFixed(2)).join(' '),
  machine: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown'}, ${os.release()}`,
  realtime,
  pollMs,
  jvmOptions: extraJvm.join(' '),
  runs,
  results: builds.map((dir) => summary(dir, results.get(dir))),
}, null, 2))
