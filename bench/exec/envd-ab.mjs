// A/B of envd's process start path, without containers, server or proxy: two envd builds run side by side on this
// host (as root, on free ports) and take the SDK's Connect request for process.Process/Start in alternating blocks of
// 10 (one keep-alive connection each), as user `nobody` so the privilege switch is part of the chain. Reports wall time
// (request to end of stream, and to the start event) and envd's own CPU time per command (utime+stime of its JVM from
// /proc, children excluded), the load-insensitive number.
//   node bench/exec/envd-ab.mjs <dir of build A> <dir of build B> [samples per variant]    (default 300)
// A build dir holds agentenv-envd.jar, jvm.options and envd.aot (agentenv-envd/target after `mvn package`).
import { request, Agent } from 'node:http'
import { readFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { freePort } from '../../e2e/lib/control-plane-harness.mjs'

const [dirA, dirB] = process.argv.slice(2, 4)
if (!dirA || !dirB) throw new Error('usage: node bench/exec/envd-ab.mjs <build dir A> <build dir B> [samples]')
const samples = Number(process.argv[4] ?? 300)
const block = 10

async function start(dir) {
  process.env.AENV_ENVD_DIR = dir
  // the harness reads AENV_ENVD_DIR when it is imported: a fresh copy of the module per build
  const { startEnvd } = await import(`../../e2e/lib/envd-harness.mjs?dir=${encodeURIComponent(dir)}`)
  const port = await freePort()
  const envd = await startEnvd({ port })
  const pid = Number(spawnSync('sh', ['-c', `ss -ltnpH 'sport = :${port}' | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2`])
    .stdout.toString().trim())
  return { dir, envd, port, pid, agent: new Agent({ keepAlive: true, maxSockets: 1 }) }
}

function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

function envelope(json) {
  const body = Buffer.from(JSON.stringify(json))
  const frame = Buffer.alloc(5 + body.length)
  frame.writeUInt32BE(body.length, 1)
  body.copy(frame, 5)
  return frame
}

function exec(target, cmd, args) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    let first
    const req = request({ host: '127.0.0.1', port: target.port, agent: target.agent, method: 'POST',
      path: '/process.Process/Start', headers: {
        'content-type': 'application/connect+json', 'connect-protocol-version': '1',
        Authorization: 'Basic ' + Buffer.from('nobody:').toString('base64'), 'Keepalive-Ping-Interval': '50',
      } }, (res) => {
      let text = ''
      res.on('data', (d) => { first ??= performance.now() - t0; text += d.toString('latin1') })
      res.on('end', () => {
        if (res.statusCode !== 200 || !text.includes('"end"') || text.includes('"error"')) reject(new Error(`${res.statusCode} ${text}`))
        else resolve({ done: performance.now() - t0, first })
      })
    })
    req.on('error', reject)
    req.end(envelope({ process: { cmd, args }, stdin: false }))
  })
}

const pct = (s, p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]
const fmt = (v) => { const s = [...v].sort((a, b) => a - b); return `p50 ${pct(s, 0.5).toFixed(2).padStart(6)} p95 ${pct(s, 0.95).toFixed(2).padStart(6)}` }

const builds = [await start(dirA), await start(dirB)]
try {
  const commands = [['/bin/true', []], ['/bin/bash', ['-l', '-c', 'true']]]
  const results = new Map()
  const rounds = Math.ceil(samples / block)
  for (let r = -2; r < rounds; r++) {
    for (const [cmd, args] of commands) {
      for (const b of builds) {
        const key = `${b.dir} ${cmd} ${args.join(' ')}`
        if (!results.has(key)) results.set(key, { done: [], first: [], cpu: 0 })
        const c0 = cpuMs(b.pid)
        const marks = []
        for (let i = 0; i < block; i++) marks.push(await exec(b, cmd, args))
        if (r >= 0) {
          const row = results.get(key)
          row.cpu += cpuMs(b.pid) - c0
          for (const m of marks) { row.done.push(m.done); row.first.push(m.first) }
        }
      }
    }
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  console.log(`${new Date().toISOString()}  n=${rounds * block} per row  load ${load}`)
  for (const [key, row] of results) {
    console.log(`${key.padEnd(70)} total ${fmt(row.done)} | first frame ${fmt(row.first)} | envd cpu ${(row.cpu / row.done.length).toFixed(2)} ms`)
  }
} finally {
  for (const b of builds) { b.agent.destroy(); await b.envd.stop() }
}
