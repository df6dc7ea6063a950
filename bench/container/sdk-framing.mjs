// What the framing of envd's answer to `commands.run('true')` costs the unmodified npm `e2b` SDK's Node, against a
// minimal responder (no server, no sandbox): bursts of 20 `Sandbox.create()` + `commands.run('true')`, as in sdk.mjs's
// burst, with the Start answered as older proxies forwarded it (`split`: headers with the start event, the
// end event, the end-of-stream envelope and the chunked body's end, four writes: four TCP segments), in three writes
// (`three`: headers with the start event, end event + end of stream, the body's end: the proxy now when envd's start
// event comes alone), in two (`two`: headers with the start event, then the rest with the body's end) or in one
// (`coalesced`: the same three envelopes with a Content-Length: the proxy now when envd's answer arrives in one read).
// Each run is a fresh Node (`--run`), its responder another process (its CPU not counted); the runs alternate between
// the variants (AENV_BENCH_FRAMINGS=split,coalesced picks some). Printed per run: the SDK's Node CPU (process.cpuUsage,
// user + system) per create + first command over the measured bursts, after 3 warm-up bursts. Loopback only. CPU time
// still varies with the machine's load on this VM (no PMU here for instruction counts): alternate, many runs.
//   node bench/container/sdk-framing.mjs [runs-per-variant=5] [bursts=10]
import { spawn } from 'node:child_process'
import net from 'node:net'
import { fileURLToPath } from 'node:url'

const self = fileURLToPath(import.meta.url)
const mode = process.argv[2]

const envelope = (flags, json) => {
  const body = Buffer.from(JSON.stringify(json))
  const head = Buffer.alloc(5)
  head[0] = flags
  head.writeUInt32BE(body.length, 1)
  return Buffer.concat([head, body])
}
const START = envelope(0, { event: { start: { pid: 5 } } })
const END = envelope(0, { event: { end: { exited: true, status: 'exit status 0' } } })
const EOS = envelope(2, {})
const chunk = (b) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')])

/** A raw HTTP/1.1 keep-alive responder: POST /v2/sandboxes (201 JSON), POST /process.Process/Start (framed as asked). */
function respond(variant) {
  let next = 0
  const server = net.createServer((socket) => {
    socket.setNoDelay(true)
    let buffered = Buffer.alloc(0)
    socket.on('data', (data) => {
      buffered = Buffer.concat([buffered, data])
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n')
        if (end < 0) return
        const head = buffered.subarray(0, end).toString('latin1')
        const lower = head.toLowerCase()
        let bodyEnd
        const length = /content-length:\s*(\d+)/.exec(lower)
        if (length) bodyEnd = end + 4 + Number(length[1])
        else if (lower.includes('transfer-encoding: chunked')) {
          const last = buffered.indexOf('0\r\n\r\n', end + 4)
          if (last < 0) return
          bodyEnd = last + 5
        } else bodyEnd = end + 4
        if (buffered.length < bodyEnd) return
        buffered = buffered.subarray(bodyEnd)
        answer(socket, head.split(' ')[1])
      }
    })
  })
  const answer = (socket, path) => {
    if (path.startsWith('/v2/sandboxes')) {
      const id = `s${String(next++).padStart(19, '0')}`
      const body = JSON.stringify({ templateID: 'base', sandboxID: id, alias: 'base', clientID: '', envdVersion: '0.6.13',
        envdAccessToken: 'e'.repeat(64), trafficAccessToken: null, domain: null })
      socket.write(`HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
    } else if (path === '/process.Process/Start') {
      const ct = 'HTTP/1.1 200 OK\r\nContent-Type: application/connect+json\r\n'
      if (variant === 'coalesced') {
        const body = Buffer.concat([START, END, EOS])
        socket.write(Buffer.concat([Buffer.from(`${ct}Content-Length: ${body.length}\r\n\r\n`), body]))
      } else {
        const head = Buffer.concat([Buffer.from(`${ct}Transfer-Encoding: chunked\r\n\r\n`), chunk(START)])
        const last = Buffer.from('0\r\n\r\n')
        const parts = variant === 'split' ? [head, chunk(END), chunk(EOS), last]
          : variant === 'three' ? [head, chunk(Buffer.concat([END, EOS])), last]
            : [head, Buffer.concat([chunk(Buffer.concat([END, EOS])), last])]
        const writeNext = () => { socket.write(parts.shift()); if (parts.length > 0) setImmediate(writeNext) }
        writeNext()
      }
    } else {
      socket.write('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n')
    }
  }
  server.listen(0, '127.0.0.1', () => console.log(server.address().port))
}

async function measure(port, bursts, warmup) {
  const { Sandbox } = await import('../../e2e/node_modules/e2b/dist/index.mjs')
  const url = `http://127.0.0.1:${port}`
  const opts = { apiUrl: url, sandboxUrl: url, apiKey: 'e2b_' + '0'.repeat(40), requestTimeoutMs: 30_000 }
  const burst = () => Promise.all(Array.from({ length: 20 }, async () => {
    const sbx = await Sandbox.create('base', opts)
    await sbx.commands.run('true')
  }))
  for (let i = 0; i < warmup; i++) await burst()
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < bursts; i++) await burst()
  const cpu = process.cpuUsage(cpu0)
  console.log(JSON.stringify({ perSandboxMs: (cpu.user + cpu.system) / 1000 / (20 * bursts) }))
}

function run(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [self, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => { out += d })
    child.once('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`${args.join(' ')} exited ${code}`))))
  })
}

if (mode === '--respond') {
  respond(process.argv[3])
} else if (mode === '--run') {
  const [variant, bursts] = [process.argv[3], Number(process.argv[4])]
  const responder = spawn(process.execPath, [self, '--respond', variant], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise((resolve) => responder.stdout.once('data', (d) => resolve(Number(String(d).trim()))))
  try {
    await measure(port, bursts, 3)
  } finally {
    responder.kill()
  }
} else {
  const runs = Number(process.argv[2] ?? 5)
  const bursts = Number(process.argv[3] ?? 10)
  const variants = (process.env.AENV_BENCH_FRAMINGS ?? 'split,three,two,coalesced').split(',')
  const results = Object.fromEntries(variants.map((v) => [v, []]))
  for (let i = 0; i < runs; i++) {
    for (const variant of variants) {
      const { perSandboxMs } = JSON.parse(await run(['--run', variant, String(bursts)]))
      results[variant].push(perSandboxMs)
      const load = (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
      console.log(`run ${i + 1} ${variant.padEnd(9)}: SDK Node CPU ${perSandboxMs.toFixed(2)} ms per create + first command (load ${load})`)
    }
  }
  for (const [variant, v] of Object.entries(results)) {
    const s = [...v].sort((a, b) => a - b)
    console.log(`${variant.padEnd(9)}: median ${s[Math.floor(s.length / 2)].toFixed(2)} ms, min ${s[0].toFixed(2)}, max ${s.at(-1).toFixed(2)} (${runs} runs x ${bursts} bursts of 20)`)
  }
}
