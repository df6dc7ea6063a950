// What one more envd costs when several run on one host, as sandboxes do (the JDK, envd's jar and its AOT cache are
// the same read-only files for all of them, shared page cache): N envds started one after another, each idle; after
// --settle-seconds (default 12: past the first native-heap trim) the RSS, PSS and private memory of each from
// /proc/PID/smaps_rollup, and the PSS by mapping (libjvm.so, the AOT cache, anonymous, other files) of the last one.
//
//   node bench/envd/shared-memory.mjs [--counts 1,2,4,8] [--settle-seconds 12]
//
// PSS divides each shared page among the processes that map it, so the sum of PSS is the memory N envds really use
// and PSS per envd approaches the private memory as N grows.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import os from 'node:os'
import { envdCommand } from '../../e2e/lib/envd-harness.mjs'
import { freePort } from '../../e2e/lib/control-plane-harness.mjs'
import { healthStatus } from '../lib/envd-probe.mjs'

const args = process.argv.slice(2)
const counts = args.includes('--counts') ? args[args.indexOf('--counts') + 1].split(',').map(Number) : [1, 2, 4, 8]
const settle = args.includes('--settle-seconds') ? Number(args[args.indexOf('--settle-seconds') + 1]) : 12

async function start() {
  const port = await freePort()
  const [java, argv] = envdCommand(['--port', String(port), '--log-level', 'WARN'])
  const child = spawn(java, argv, { stdio: ['ignore', 'ignore', 'inherit'] })
  const deadline = Date.now() + 30_000
  while ((await healthStatus(port)) !== 204) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('envd did not start')
    await delay(5)
  }
  return child
}

function rollup(pid) {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)[1]) / 1024
  return { rss: field('Rss'), pss: field('Pss'), private: field('Private_Clean') + field('Private_Dirty') }
}

// PSS (MiB) per mapping group of one process
function pssByMapping(pid) {
  const groups = {}
  let current = null
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (head) {
      const name = head[1] || '[anon]'
      current = /libjvm/.test(name) ? 'libjvm.so' : /\.aot$/.test(name) ? 'AOT cache' : /\.jar$/.test(name) ? 'jar'
        : name.startsWith('/') ? 'other files' : 'anonymous'
      continue
    }
    const pss = /^Pss:\s+(\d+)/.exec(line)
    if (pss && current) groups[current] = (groups[current] ?? 0) + Number(pss[1]) / 1024
  }
  return Object.fromEntries(Object.entries(groups).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Number(v.toFixed(1))]))
}

const mib = (v) => Number(v.toFixed(1))
const results = []
for (const n of counts) {
  const children = []
  try {
    for (let i = 0; i < n; i++) children.push(await start())
    await delay(settle * 1000)
    const each = children.map((c) => rollup(c.pid))
    const sum = (k) => each.reduce((a, e) => a + e[k], 0)
    results.push({
      envds: n,
      'RSS per envd (MiB)': mib(sum('rss') / n),
      'PSS per envd (MiB)': mib(sum('pss') / n),
      'private per envd (MiB)': mib(sum('private') / n),
      'PSS of all (MiB)': mib(sum('pss')),
      'PSS of the last one by mapping (MiB)': pssByMapping(children.at(-1).pid),
    })
  } finally {
    for (const c of children) {
      const exited = new Promise((r) => c.once('exit', r))
      c.kill('SIGTERM')
      await exited
    }
  }
}
console.log(JSON.stringify({
  date: new Date().toISOString(),
  loadAverage: os.loadavg().map((l) => l.toFixed(2)).join(' '),
  settleSeconds: settle,
  results,
}, null, 2))
