// envd files benchmark: /files upload and download throughput (multipart, octet-stream, gzip), small-file round
// trips, ListDir of a large directory, WatchDir event latency, and envd's peak RSS while doing it (the transfers
// stream: memory must not grow with file size).
//
//   node bench/envd/files-throughput.mjs [--mib N] [--runs N]
//
// Needs the built jar (mvn -B -pl agentenv-envd -am package). Drives envd with the npm e2b SDK, as users do.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir, cpus } from 'node:os'
import { createRequire } from 'node:module'
import { startEnvd } from '../../e2e/lib/envd-harness.mjs'

// the SDK is installed in the e2e package (cd e2e && npm ci)
const { Sandbox } = createRequire(new URL('../../e2e/package.json', import.meta.url))('e2b')

const args = process.argv.slice(2)
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback)
const mib = option('--mib', 200)
const runs = option('--runs', 3)
const port = 49_983 + 19

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]
const peakRssMiB = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024

const work = mkdtempSync(join(tmpdir(), 'envd-bench-files-'))
const envd = await startEnvd({ port, init: { defaultWorkdir: work } })
const results = []
try {
  const sbx = new Sandbox({ sandboxId: 'bench', envdVersion: '99.99.99', debug: true, sandboxUrl: envd.url })
  const data = new Uint8Array(mib * 1024 * 1024)
  for (let i = 0; i < data.length; i += 512) data[i] = (i / 512) % 251 // compressible, not trivially so

  async function throughput(label, action) {
    const ms = []
    for (let r = 0; r < runs; r++) {
      const start = performance.now()
      await action()
      ms.push(performance.now() - start)
    }
    const m = median(ms)
    results.push([label, `${m.toFixed(0)} ms`, `${(mib / (m / 1000)).toFixed(0)} MiB/s`])
  }

  await throughput(`SDK upload ${mib} MiB, multipart`, () => sbx.files.write('big.bin', data.buffer))
  await throughput(`SDK upload ${mib} MiB, octet-stream`, () => sbx.files.write('big.bin', data.buffer, { useOctetStream: true }))
  await throughput(`SDK upload ${mib} MiB, octet-stream gzip`, () => sbx.files.write('big.bin', data.buffer, { gzip: true }))
  await throughput(`SDK download ${mib} MiB`, () => sbx.files.read('big.bin', { format: 'bytes' }))
  await throughput(`SDK download ${mib} MiB, gzip`, () => sbx.files.read('big.bin', { format: 'bytes', gzip: true }))
  // the same transfers over plain HTTP (no SDK decoding on the client), closer to envd's own cost
  const body = Buffer.from(data.buffer)
  await throughput(`raw HTTP upload ${mib} MiB, octet-stream`, async () => {
    const res = await fetch(`${envd.url}/files?path=raw.bin`, {
      method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body,
    })
    if (res.status !== 200) throw new Error(`upload answered ${res.status}`)
    await res.arrayBuffer()
  })
  await throughput(`raw HTTP download ${mib} MiB`, async () => {
    const res = await fetch(`${envd.url}/files?path=raw.bin`, { headers: { 'accept-encoding': 'identity' } })
    for await (const chunk of res.body) void chunk // discard
  })
  const transferPeak = peakRssMiB(envd.pid)

  const small = []
  for (let i = 0; i < 300; i++) {
    const start = performance.now()
    await sbx.files.write(`small/${i % 20}.txt`, `content ${i}`)
    await sbx.files.read(`small/${i % 20}.txt`)
    small.push(performance.now() - start)
  }
  results.push(['SDK: 1 KiB write + read round trip', `p50 ${median(small).toFixed(2)} ms`, `p95 ${percentile(small, 0.95).toFixed(2)} ms`])

  const stats = []
  for (let i = 0; i < 300; i++) {
    const start = performance.now()
    const res = await fetch(`${envd.url}/filesystem.Filesystem/Stat`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"path":"small/1.txt"}',
    })
    await res.text()
    stats.push(performance.now() - start)
  }
  results.push(['raw HTTP: Stat (unary Connect JSON)', `p50 ${median(stats.slice(50)).toFixed(2)} ms`,
    `p95 ${percentile(stats.slice(50), 0.95).toFixed(2)} ms`])

  const wide = join(work, 'wide')
  mkdirSync(wide)
  for (let i = 0; i < 10_000; i++) writeFileSync(join(wide, `f${i}`), '')
  const lists = []
  for (let r = 0; r < 5; r++) {
    const start = performance.now()
    const entries = await sbx.files.list('wide')
    lists.push(performance.now() - start)
    if (entries.length !== 10_000) throw new Error(`listed ${entries.length}`)
  }
  results.push(['SDK: ListDir of 10,000 files', `p50 ${median(lists).toFixed(0)} ms`, ''])
  const rawLists = []
  for (let r = 0; r < 5; r++) {
    const start = performance.now()
    const res = await fetch(`${envd.url}/filesystem.Filesystem/ListDir`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"path":"wide","depth":1}',
    })
    await res.arrayBuffer()
    rawLists.push(performance.now() - start)
  }
  results.push(['raw HTTP: ListDir of 10,000 files', `p50 ${median(rawLists).toFixed(0)} ms`, ''])

  await sbx.files.makeDir('watched')
  const latencies = []
  let pending = null
  const handle = await sbx.files.watchDir('watched', (event) => {
    if (pending && event.name === pending.name) {
      latencies.push(performance.now() - pending.start)
      pending.resolve()
      pending = null
    }
  })
  for (let i = 0; i < 100; i++) {
    const name = `e${i}.txt`
    const seen = new Promise((resolve) => { pending = { name, start: performance.now(), resolve } })
    writeFileSync(join(work, 'watched', name), 'x')
    await seen
  }
  await handle.stop()
  results.push(['SDK: WatchDir, file created on disk to event in the SDK', `p50 ${median(latencies).toFixed(2)} ms`,
    `p95 ${percentile(latencies, 0.95).toFixed(2)} ms`])

  console.log(`machine: ${cpus().length} x ${cpus()[0].model}, ${new Date().toISOString().slice(0, 10)}, runs=${runs}`)
  console.log('| measurement | result | |')
  console.log('|---|---|---|')
  for (const row of results) console.log(`| ${row.join(' | ')} |`)
  console.log(`\nenvd peak RSS during the ${mib} MiB transfers: ${transferPeak.toFixed(0)} MiB; at the end: ${peakRssMiB(envd.pid).toFixed(0)} MiB`)
} finally {
  await envd.stop()
  rmSync(work, { recursive: true, force: true })
}
