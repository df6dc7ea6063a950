// What the web console's terminal adds to a keystroke's echo over the SDK's PTY, measured A/B in one run on one
// sandbox of a real server with the container backend, round by round (each path first in turn):
//  (a) the SDK's PTY from Node: `sbx.pty.create`, then `sbx.pty.sendInput` of one character, timed until that
//      character comes back in onData;
//  (b) the console's Terminal tab in Debian's Chromium (headless, playwright-core): one key pressed into xterm.js,
//      timed on the page's own clock from the keydown (a capture listener on window, the first to see it) to
//        - received: the first chunk of the terminal's stream (envd's PTY output) read by the page after it, and
//        - rendered: xterm's rows in the DOM showing the echo (the mutation, in the frame that paints it).
// Every shell runs in the same sandbox through the same server and sandbox proxy. Each key is erased again (Backspace,
// not timed) so the line stays short. Prints p50 / p95 / min / mean of each and the differences of the medians, with
// where the console's time goes (its own code before the request; one HTTP round trip from the page and from Node).
// --base-console <dir> adds (c): the same in a second console page whose files come from <dir>, a Vite build of
// another commit's console (A/B of console changes in one run; the server and its API are this commit's):
//   git archive <commit> agentenv-console | tar -x -C /tmp/base && (cd /tmp/base/agentenv-console && npm ci &&
//   npx vite build --outDir /tmp/base-console)
//
//   flock /tmp/agentenv-container-e2e.lock node bench/console/terminal.mjs [--keys N] [--warmup W] [--base-console DIR]
//
// Defaults: 200 keys per path after 20 warm-up keys per path. Claims a benchmark lane L (bench/lib/lane.mjs, layout
// `console`: netns prefix aenveL, runc dir /run/agentenv/bench-console-L, cgroup parent agentenv-bench-console-L,
// container ids bconL-*, network slots 10880 + 16 L). Needs root, scripts/setup-host.sh, the built jars
// (mvn -B -DskipTests package), /usr/bin/chromium and e2e's node_modules (npm ci in e2e). The server runs with the JVM
// options of scripts/serve.sh (bench/lib/container-server.mjs).
import os from 'node:os'
import { execFileSync } from 'node:child_process'
import { extname, join } from 'node:path'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { launchChromium } from '../../e2e/lib/browser.mjs'
import { repoRoot } from '../../e2e/lib/control-plane-harness.mjs'
import { startBenchServer } from '../lib/container-server.mjs'
import { claimLane, LAYOUTS } from '../lib/lane.mjs'

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && Number(args[i + 1]) >= 0 ? Number(args[i + 1]) : fallback
}
const keys = option('--keys', 200)
const warmup = option('--warmup', 20)
const baseAt = args.indexOf('--base-console')
const baseConsole = baseAt >= 0 ? args[baseAt + 1] : null
const KEY = 'k'

/**
 * Page instrumentation, installed before the console's own script: the keydown time, the first terminal stream chunk
 * after it, and the first change of xterm's rows after it, all on performance.now(). arm() starts a round;
 * window.__echo.done resolves with the round's times.
 */
function instrumentPage() {
  const echo = { round: null, done: null, observer: null }
  window.__echo = echo
  const rows = () => document.querySelector('.xterm-rows')
  const finish = (r) => {
    if (r.received !== null && r.rendered !== null) {
      echo.round = null
      r.resolve({ key: r.key, sent: r.sent, received: r.received, rendered: r.rendered })
    }
  }
  const check = () => {
    const r = echo.round
    if (!r || r.key === null || r.rendered !== null) return
    if (rows().textContent !== r.before) {
      r.rendered = performance.now()
      finish(r)
    }
  }
  echo.arm = () => {
    if (!echo.observer) {
      echo.observer = new MutationObserver(check)
      echo.observer.observe(rows(), { subtree: true, childList: true, characterData: true })
    }
    let resolve
    echo.done = new Promise((r) => { resolve = r })
    echo.round = { before: rows().textContent, key: null, sent: null, received: null, rendered: null, resolve }
  }
  addEventListener('keydown', () => {
    const r = echo.round
    if (r && r.key === null) r.key = performance.now()
  }, true)
  // the key's SendInput call leaving the page's code (the console's own work before the network)
  const fetch0 = window.fetch
  window.fetch = function (input, init) {
    const r = echo.round
    if (r && r.key !== null && r.sent === null && String(input).endsWith('/process.Process/SendInput')) {
      r.sent = performance.now()
    }
    return fetch0.call(this, input, init)
  }
  // the terminal's output stream is the page's only body read through a reader; its chunks are Connect envelopes
  const decoder = new TextDecoder()
  const read = ReadableStreamDefaultReader.prototype.read
  ReadableStreamDefaultReader.prototype.read = function () {
    return read.call(this).then((result) => {
      const r = echo.round
      if (r && r.key !== null && r.received === null && result.value && decoder.decode(result.value).includes('"pty"')) {
        r.received = performance.now()
        finish(r)
      }
      return result
    })
  }
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const pct = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]
  return { n: s.length, p50: pct(0.5), p95: pct(0.95), min: s[0], max: s.at(-1), mean: s.reduce((a, b) => a + b, 0) / s.length }
}
const f = (x) => x.toFixed(2).padStart(7)
const line = (what, s) => console.log(`${what.padEnd(57)} n=${s.n}  p50 ${f(s.p50)}  p95 ${f(s.p95)}  min ${f(s.min)}  mean ${f(s.mean)}  max ${f(s.max)} ms`)

delete process.env.E2B_DEBUG
const commit = execFileSync('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
const loadAtStart = os.loadavg()
const lane = await claimLane()
const server = await startBenchServer(lane, LAYOUTS.console, { poolSize: 1, maxSandboxes: 4 })
const browsers = []
let sbx
try {
  const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 60_000 }
  sbx = await Sandbox.create('base', { ...opts, timeoutMs: 1_800_000 })

  // (a) the SDK's PTY
  const decoder = new TextDecoder()
  let sdkWaiter = null
  const pty = await sbx.pty.create({
    cols: 120, rows: 40, timeoutMs: 0,
    onData: (data) => {
      const at = performance.now()
      sdkWaiter?.(decoder.decode(data), at)
    },
  })
  /** Sends {@code input}; resolves with the ms until output for which {@code done(textSoFar)} holds. */
  const sdkRound = async (input, done) => {
    let text = ''
    const echoed = new Promise((resolve) => {
      sdkWaiter = (chunk, at) => {
        text += chunk
        if (done(text)) {
          sdkWaiter = null
          resolve(at)
        }
      }
    })
    const sent = performance.now()
    const sending = sbx.pty.sendInput(pty.pid, new TextEncoder().encode(input))
    const at = await echoed
    await sending
    return at - sent
  }
  await new Promise((resolve) => setTimeout(resolve, 500)) // the shell's prompt and start-up output
  await sdkRound(KEY, (t) => t.includes(KEY))
  await sdkRound('\x7f', () => true)

  /**
   * (b) the console's terminal in a browser of its own (so that no page is a background tab), signed in and on this
   * sandbox's Terminal tab; with {@code files}, the console's files are answered from that directory (another build).
   */
  const openConsole = async (files) => {
    const browser = await launchChromium()
    browsers.push(browser)
    const page = await browser.context.newPage()
    if (files) {
      const csp = (await fetch(`${server.url}/console/`)).headers.get('content-security-policy')
      await page.route((url) => url.origin === server.url && url.pathname.startsWith('/console'), (route) => {
        const path = new URL(route.request().url()).pathname.replace(/^\/console\/?/, '') || 'index.html'
        const type = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' }[extname(path)]
        return route.fulfill({ path: join(files, path), contentType: type, headers: { 'Content-Security-Policy': csp } })
      })
    }
    await page.addInitScript(instrumentPage)
    await page.goto(`${server.url}/console/`)
    await page.fill('#api-key', server.apiKey)
    await page.click('button[type=submit]')
    await page.locator(`[data-testid="sandbox-row"][data-id="${sbx.sandboxId}"] a`).first().click()
    await page.getByTestId('tab-terminal').click()
    await page.locator('[data-testid="terminal-status"]:text-is("connected")').waitFor({ timeout: 30_000 })
    await page.waitForFunction(() => /[$#]\s*$/.test(document.querySelector('.xterm-rows').textContent.trimEnd()), null,
      { timeout: 30_000 }).catch(async (e) => {
      throw new Error(`no shell prompt in the terminal: ${JSON.stringify(await page.locator('.xterm-rows').textContent())}`, { cause: e })
    })
    await page.waitForTimeout(500) // the prompt settled
    await page.locator('.xterm-helper-textarea').focus()
    const round = async (key) => {
      await page.evaluate(() => window.__echo.arm())
      await page.keyboard.press(key)
      const r = await page.evaluate(() => window.__echo.done)
      return { sent: r.sent - r.key, received: r.received - r.key, rendered: r.rendered - r.key, drawn: r.rendered - r.received }
    }
    const samples = { sent: [], received: [], rendered: [], drawn: [] }
    const run = async (keep) => {
      const r = await round(KEY)
      await round('Backspace')
      if (keep) for (const k of Object.keys(samples)) samples[k].push(r[k])
    }
    return { browser, page, samples, run }
  }
  const consoles = [{ tag: '(b)', name: 'console', ...(await openConsole(null)) }]
  if (baseConsole) consoles.push({ tag: '(c)', name: 'base console', ...(await openConsole(baseConsole)) })

  // the transports alone: one HTTP round trip to the server (GET /health) from the page's fetch and from Node's
  const pageHttp = []
  const nodeHttp = []
  for (let i = 0; i < 50; i++) {
    pageHttp.push(await consoles[0].page.evaluate(async () => {
      const t0 = performance.now()
      await (await fetch('/health', { cache: 'no-store' })).arrayBuffer()
      return performance.now() - t0
    }))
    const t0 = performance.now()
    await (await fetch(`${server.url}/health`)).arrayBuffer()
    nodeHttp.push(performance.now() - t0)
  }

  const sdk = []
  const runSdk = async (keep) => {
    const ms = await sdkRound(KEY, (t) => t.includes(KEY))
    await sdkRound('\x7f', () => true)
    if (keep) sdk.push(ms)
  }
  const paths = [runSdk, ...consoles.map((c) => c.run)]
  for (let i = 0; i < warmup + keys; i++) {
    const keep = i >= warmup
    for (let j = 0; j < paths.length; j++) await paths[(i + j) % paths.length](keep) // each path first in turn
  }

  const version = browsers[0].context.browser()?.version() ?? 'unknown'
  const loadAtEnd = os.loadavg()
  console.log(`commit ${commit}, ${new Date().toISOString()}; machine: ${os.cpus().length} x ${os.cpus()[0].model}; `
    + `load at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${loadAtEnd.map((l) => l.toFixed(2)).join(' ')}; `
    + `Chromium ${version}${baseConsole ? `; base console from ${baseConsole}` : ''}`)
  console.log(`${keys} keys per path after ${warmup} warm-up keys, interleaved round by round (order rotating)`)
  const a = stats(sdk)
  line('(a) SDK PTY: sendInput to the echo in onData', a)
  for (const c of consoles) {
    const b = stats(c.samples.received)
    const r = stats(c.samples.rendered)
    line(`${c.tag} ${c.name}: keydown to the echo received by the page`, b)
    line(`${c.tag} ${c.name}: keydown to the echo in xterm's rows`, r)
    line('    of which keydown to its SendInput fetch() call', stats(c.samples.sent))
    line('    of which echo received to xterm\'s rows changed', stats(c.samples.drawn))
    console.log(`${c.name} over the SDK, difference of the medians: received ${(b.p50 - a.p50).toFixed(2)} ms, `
      + `rendered ${(r.p50 - a.p50).toFixed(2)} ms`)
  }
  line('GET /health round trip from the page (fetch)', stats(pageHttp.slice(10)))
  line('GET /health round trip from Node (fetch)', stats(nodeHttp.slice(10)))
  await pty.kill()
} finally {
  for (const b of browsers) await b.close()
  await sbx?.kill().catch(() => {})
  await server.stop({ timeoutMs: 120_000 })
}
