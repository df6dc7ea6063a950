// Measures the floor server built by floor.sh: start -> first 204 (10 starts) and memory by mapping.
//   node bench/envd/floor/measure.mjs DIR [--rt] [--share own|default|off] [-- extra JVM options...]
// --share: own = its own AOT cache (floor.aot, the default), default = the JDK's default CDS archive only (no
// -XX:AOTCache), off = no class data sharing at all (-Xshare:off)
// --rt: as bench/envd/startup-phases.mjs --rt (server under `chrt -r 10`, this poller at real-time priority 20)
import { spawn, execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import os from 'node:os'
import { threadCpuMs } from '../../lib/proc.mjs'
import { freePort } from '../../../e2e/lib/control-plane-harness.mjs'
import { healthStatus } from '../../lib/envd-probe.mjs'

const dir = process.argv[2]
const realtime = process.argv.includes('--rt')
if (realtime) execFileSync('chrt', ['-r', '-p', '20', String(process.pid)])
const java = join(process.env.JAVA_HOME || '/usr/lib/jvm/temurin-25-jdk-amd64', 'bin', 'java')
const options = readFileSync(join(dir, 'jvm.options'), 'utf8').split('\n').map((l) => l.trim()).filter(Boolean)
const share = process.argv.includes('--share') ? process.argv[process.argv.indexOf('--share') + 1] : 'own'
const sharing = { own: [`-XX:AOTCache=${join(dir, 'floor.aot')}`], default: [], off: ['-Xshare:off'] }[share]
if (!sharing) throw new Error(`--share ${share}: own, default or off`)
const extraJvm = process.argv.includes('--') ? process.argv.slice(process.argv.indexOf('--') + 1) : []

// RSS / PSS / private / anonymous (MiB) per mapping group, from /proc/PID/smaps
function memory(pid) {
  const groups = {}
  let current = null
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (head) {
      const name = head[1] || '[anon]'
      current = /libjvm/.test(name) ? 'libjvm.so' : /\.aot$/.test(name) ? 'AOT cache' : /\/modules$/.test(name) ? 'modules'
        : /libc\.so/.test(name) ? 'libc' : name.startsWith('/') ? 'other files' : name.startsWith('[stack') ? '[anon]' : name
      groups[current] ??= { rss: 0, pss: 0, private: 0, anonymous: 0 }
      continue
    }
    const field = /^(Rss|Pss|Private_Clean|Private_Dirty|Anonymous):\s+(\d+)/.exec(line)
    if (!field || !current) continue
    const g = groups[current]
    const kib = Number(field[2])
    if (field[1] === 'Rss') g.rss += kib
    else if (field[1] === 'Pss') g.pss += kib
    else if (field[1] === 'Anonymous') g.anonymous += kib
    else g.private += kib
  }
  const total = { rss: 0, pss: 0, private: 0, anonymous: 0 }
  const rows = {}
  for (const [name, g] of Object.entries(groups)) {
    for (const k of Object.keys(total)) total[k] += g[k]
    if (g.rss >= 100) rows[name] = g
  }
  rows.total = total
  // one line per group: "RSS / PSS / private / anonymous"
  const mib = (v) => (v / 1024).toFixed(1)
  return Object.fromEntries(Object.entries(rows).sort((a, b) => b[1].rss - a[1].rss)
    .map(([name, g]) => [name, `${mib(g.rss)} / ${mib(g.pss)} / ${mib(g.private)} / ${mib(g.anonymous)}`]))
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ready = []
const cpu = [] // the server's CPU (all threads) when the 204 came: insensitive to other load
let memoryAt2 = null
let memoryAt12 = null
for (let i = 0; i < 10; i++) {
  const port = await freePort()
  const t0 = performance.now()
  const argv = [...options, ...sharing, ...extraJvm, '-cp', join(dir, 'floor.jar'), 'HealthFloor', String(port)]
  const child = realtime ? spawn('chrt', ['-r', '10', java, ...argv], { stdio: ['ignore', 'ignore', 'inherit'] })
    : spawn(java, argv, { stdio: ['ignore', 'ignore', 'inherit'] })
  while (await healthStatus(port) !== 204) await delay(1)
  ready.push(performance.now() - t0)
  cpu.push(Object.values(threadCpuMs(child.pid)).reduce((a, b) => a + b, 0))
  if (i === 9) {
    await delay(2000)
    memoryAt2 = memory(child.pid)
    await delay(10_000)
    memoryAt12 = memory(child.pid)
  }
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
}
console.log(JSON.stringify({
  date: new Date().toISOString(),
  loadAverage: os.loadavg().map((l) => l.toFixed(2)).join(' '),
  realtime,
  share,
  jvmOptions: extraJvm.join(' '),
  'start -> first 204 min / median / max (ms)': `${Math.min(...ready).toFixed(1)} / ${median(ready).toFixed(1)} / ${Math.max(...ready).toFixed(1)}`,
  'CPU until the 204 min / median / max (ms)': `${Math.min(...cpu).toFixed(1)} / ${median(cpu).toFixed(1)} / ${Math.max(...cpu).toFixed(1)}`,
  'memory 2 s after start, RSS / PSS / private / anonymous (MiB)': memoryAt2,
  'memory 12 s after start, RSS / PSS / private / anonymous (MiB)': memoryAt12,
}, null, 2))
