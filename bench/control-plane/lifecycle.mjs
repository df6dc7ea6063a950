// Control-plane overhead benchmark: REST latency of create, pause, connect (resume) and kill with the mock backend,
// so what is measured is the HTTP layer + orchestrator + SQLite (WAL, synchronous=FULL: one fsync per state change),
// not a real sandbox. Then the same cycle from concurrent clients, for throughput, and the server's RSS afterwards.
//
//   node bench/control-plane/lifecycle.mjs [--cycles N] [--clients C]
//
// Needs the built jars: mvn -B -pl agentenv-server,agentenv-backend-mock -am package -DskipTests
import { readFileSync } from 'node:fs'
import os from 'node:os'
import { startServer } from '../../e2e/lib/control-plane-harness.mjs'

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && Number(args[i + 1]) > 0 ? Number(args[i + 1]) : fallback
}
const cycles = option('--cycles', 200)
const clients = option('--clients', 16)

const server = await startServer({ backend: 'mock' })
const headers = { 'X-API-Key': server.apiKey, 'Content-Type': 'application/json' }

async function call(method, path, body, expected) {
  const started = process.hrtime.bigint()
  const res = await fetch(server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (!expected.includes(res.status)) throw new Error(`${method} ${path} -> ${res.status} ${text}`)
  return { ms, json: text ? JSON.parse(text) : undefined }
}

async function cycle(samples) {
  const created = await call('POST', '/v2/sandboxes', { templateID: 'base', timeout: 300 }, [201])
  const id = created.json.sandboxID
  const paused = await call('POST', `/sandboxes/${id}/pause`, {}, [204])
  const connected = await call('POST', `/v2/sandboxes/${id}/connect`, { timeout: 60 }, [201])
  const killed = await call('DELETE', `/sandboxes/${id}`, undefined, [204])
  samples.create.push(created.ms)
  samples.pause.push(paused.ms)
  samples.connect.push(connected.ms)
  samples.kill.push(killed.ms)
}

const newSamples = () => ({ create: [], pause: [], connect: [], kill: [] })
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
function table(samples) {
  const rows = ['| operation | n | p50 ms | p95 ms | p99 ms | max ms |', '|---|---|---|---|---|---|']
  for (const [op, values] of Object.entries(samples)) {
    const s = [...values].sort((a, b) => a - b)
    rows.push(`| ${op} | ${s.length} | ${pct(s, 50).toFixed(2)} | ${pct(s, 95).toFixed(2)} | ${pct(s, 99).toFixed(2)} | ${s.at(-1).toFixed(2)} |`)
  }
  return rows.join('\n')
}

try {
  for (let i = 0; i < 20; i++) await cycle(newSamples()) // warm-up

  const sequential = newSamples()
  for (let i = 0; i < cycles; i++) await cycle(sequential)

  const concurrent = newSamples()
  const started = process.hrtime.bigint()
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let i = 0; i < Math.ceil(cycles / clients); i++) await cycle(concurrent)
  }))
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const operations = concurrent.create.length * 4
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1])

  console.log(`machine: ${os.cpus().length} x ${os.cpus()[0].model}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; ` +
    `date: ${new Date().toISOString()}; node ${process.version}`)
  console.log(`\nSequential, ${cycles} cycles (one client):\n\n${table(sequential)}`)
  console.log(`\n${clients} concurrent clients, ${concurrent.create.length} cycles: ${(operations / seconds).toFixed(0)} ` +
    `lifecycle operations/s\n\n${table(concurrent)}`)
  console.log(`\nServer RSS after the run: ${(rssKiB / 1024).toFixed(0)} MiB (-Xmx256m, SerialGC)`)
} finally {
  await server.stop()
}
