// The web console's speed in Debian's Chromium (headless, playwright-core): the compressed bytes of the first load
// (the sign-in page: everything fetched before a key is typed, from an empty cache), and how long the sandbox list
// takes to show 1,000 sandboxes, from the browser's performance timeline: the marks the list view sets when a poll's
// data arrived (aenv:list-data) and after the rows were rendered and painted (aenv:list-rendered). The list renders
// the rows near the viewport (a screenful plus overscan) in a box as tall as all of them; the count shown must be
// all of them. The server runs on the mock backend (no real sandboxes: what is measured is the page, not the host).
//
// Then the scroll, on the same page and list: the page itself scrolls the window from the top of the list to its
// bottom and back, a fixed step per animation frame (--scroll-px, default 100 px: 6,000 px/s at 60 Hz), while its
// 1.5 s polls go on. From the page's timeline: the interval between animation frames (requestAnimationFrame
// timestamps), PerformanceObserver 'longtask' and 'long-animation-frame' entries, and after every step whether the
// rows in the DOM cover the part of the list inside the viewport (a gap would be painted blank). Event Timing does not
// apply: a scroll has no discrete input events. --base-console <dir> scrolls a second console, its files from <dir>
// (a Vite build of another commit's console, made as bench/console/terminal.mjs says), each console in a browser of
// its own, in turn A, B, A, B for --scroll-runs (default 2); also Chromium's main-thread time per frame by kind
// (CDP Performance.getMetrics).
//
//   node bench/console/list.mjs [--sandboxes N] [--runs R] [--scroll-px P] [--scroll-runs S] [--base-console DIR]
//
// Needs the built jars (mvn -B -DskipTests package, or -pl agentenv-server,agentenv-backend-mock -am) and
// /usr/bin/chromium (apt-get install -y chromium); e2e's node_modules (npm ci in e2e) for playwright-core.
import os from 'node:os'
import { extname, join } from 'node:path'
import { startServer } from '../../e2e/lib/control-plane-harness.mjs'
import { launchChromium } from '../../e2e/lib/browser.mjs'

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && Number(args[i + 1]) > 0 ? Number(args[i + 1]) : fallback
}
const count = option('--sandboxes', 1000)
const runs = option('--runs', 7)
const scrollPx = option('--scroll-px', 100)
const scrollRuns = option('--scroll-runs', 2)
const baseAt = args.indexOf('--base-console')
const baseConsole = baseAt >= 0 ? args[baseAt + 1] : null

/**
 * In the page: scrolls the window down the list and back, {@code step} px per animation frame, and answers the frame
 * intervals, the long tasks and long animation frames seen meanwhile, and the steps after which the rows in the DOM
 * did not cover the list's part of the viewport (with the largest uncovered height).
 */
async function scrollList(step) {
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve))
  scrollTo(0, 0)
  for (let i = 0; i < 10; i++) await frame()
  const longTasks = []
  const loafs = []
  const observers = []
  for (const [type, into] of [['longtask', longTasks], ['long-animation-frame', loafs]]) {
    if (!PerformanceObserver.supportedEntryTypes.includes(type)) continue
    const o = new PerformanceObserver((list) => into.push(...list.getEntries().map((e) => ({ start: e.startTime,
      duration: e.duration, blocking: e.blockingDuration ?? 0 }))))
    o.observe({ type })
    observers.push(o)
  }
  // the rows' box: a tbody (a table with spacer rows) or the rowgroup whose rows are placed at their offsets
  const body = document.querySelector('[data-testid="sandbox-table"] :is(tbody, [role="rowgroup"])')
  const bottom = () => document.documentElement.scrollHeight - innerHeight
  const gaps = []
  const covered = () => {
    const list = body.getBoundingClientRect()
    const top = Math.max(0, list.top)
    const end = Math.min(innerHeight, list.bottom)
    const rows = body.querySelectorAll('[data-testid="sandbox-row"]')
    if (!rows.length) return end - top
    const first = rows[0].getBoundingClientRect()
    const last = rows[rows.length - 1].getBoundingClientRect()
    return Math.max(0, first.top - top) + Math.max(0, end - last.bottom)
  }
  const intervals = []
  let steps = 0
  let last = await frame()
  const started = performance.now()
  for (const dir of [1, -1]) {
    for (;;) {
      const at = await frame()
      intervals.push(at - last)
      last = at
      if (dir > 0 ? scrollY >= bottom() - 1 : scrollY <= 0) break
      scrollBy(0, dir * step)
      steps++
      const gap = covered() // the rows as this frame paints them: the new position, the rows of the last render
      if (gap > 0.5) gaps.push({ at: Math.round(scrollY), gap: Math.round(gap) })
    }
  }
  const elapsed = performance.now() - started
  await new Promise((resolve) => setTimeout(resolve, 100))
  for (const o of observers) o.disconnect()
  return { intervals, longTasks, loafs, gaps, steps, elapsed, height: bottom() }
}

const browsers = []
const server = await startServer({ backend: 'mock', env: { AENV_DEFAULT_TIMEOUT_V2_SECONDS: '3600' } })
const browser = await launchChromium()
browsers.push(browser)
try {
  const headers = { 'X-API-Key': server.apiKey, 'Content-Type': 'application/json' }
  for (let i = 0; i < count; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => fetch(`${server.url}/v2/sandboxes`, {
      method: 'POST', headers,
      body: JSON.stringify({ templateID: 'base', metadata: { n: String(i + j), team: (i + j) % 2 ? 'a' : 'b' } }),
    }).then((r) => { if (r.status !== 201) throw new Error(`create: ${r.status}`) })))
  }

  // first load: a fresh page, empty cache, up to the sign-in form
  const page = await browser.context.newPage()
  await page.goto(`${server.url}/console/`, { waitUntil: 'networkidle' })
  await page.locator('#api-key').waitFor()
  const load = await page.evaluate(() => {
    const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
    return entries.map((e) => ({ name: e.name, transfer: e.transferSize, body: e.encodedBodySize, decoded: e.decodedBodySize }))
  })

  await page.fill('#api-key', server.apiKey)
  await page.click('button[type=submit]')
  await page.getByTestId('sandbox-table').waitFor()

  const samples = []
  for (let r = 0; r < runs; r++) {
    await page.reload()
    const timing = await page.waitForFunction((n) => {
      const data = performance.getEntriesByName('aenv:list-data').find((m) => m.detail.rows === n)
      const shown = performance.getEntriesByName('aenv:list-rendered').find((m) => m.detail.rows === n)
      if (!data || !shown) return null
      return { render: shown.startTime - data.startTime, sinceNavigation: shown.startTime,
        counted: document.querySelector('[data-testid="sandbox-count"]').textContent,
        rows: document.querySelectorAll('[data-testid="sandbox-row"]').length }
    }, count, { timeout: 60_000, polling: 50 }).then((h) => h.jsonValue())
    if (timing.counted !== `${count} of ${count}` || timing.rows === 0) {
      throw new Error(`the list shows ${timing.counted} with ${timing.rows} rows in the DOM, expected ${count}`)
    }
    samples.push(timing)
  }

  const version = await page.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1])
  const viewport = page.viewportSize()
  await page.close()

  /**
   * One scroll pass: a signed-in console showing all the sandboxes, in a browser of its own (the only page, in front),
   * its files from {@code files} when given; the page's own figures plus Chromium's time per kind of work (CDP
   * Performance.getMetrics, before and after).
   */
  const scrollPass = async (files) => {
    const own = await launchChromium()
    browsers.push(own)
    try {
      const p = await own.context.newPage()
      if (files) {
        const csp = (await fetch(`${server.url}/console/`)).headers.get('content-security-policy')
        await p.route((url) => url.origin === server.url && url.pathname.startsWith('/console'), (route) => {
          const path = new URL(route.request().url()).pathname.replace(/^\/console\/?/, '') || 'index.html'
          const type = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' }[extname(path)]
          return route.fulfill({ path: join(files, path), contentType: type, headers: { 'Content-Security-Policy': csp } })
        })
      }
      await p.goto(`${server.url}/console/`)
      await p.fill('#api-key', server.apiKey)
      await p.click('button[type=submit]')
      await p.locator(`[data-testid="sandbox-count"]:text-is("${count} of ${count}")`).waitFor({ timeout: 60_000 })
      await p.bringToFront()
      await p.waitForTimeout(500)
      const cdp = await own.context.newCDPSession(p)
      await cdp.send('Performance.enable')
      const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]))
      const before = await metrics()
      const result = await p.evaluate(scrollList, scrollPx)
      const after = await metrics()
      result.work = Object.fromEntries(['ScriptDuration', 'LayoutDuration', 'RecalcStyleDuration', 'TaskDuration']
        .map((k) => [k, (after[k] - before[k]) * 1000]))
      return result
    } finally {
      await own.close()
    }
  }
  const consoles = [{ name: 'console' }]
  if (baseConsole) consoles.push({ name: `base console (${baseConsole})`, files: baseConsole })
  const scrolls = consoles.map(() => [])
  for (let r = 0; r < scrollRuns; r++) {
    for (const [i, c] of consoles.entries()) scrolls[i].push(await scrollPass(c.files))
  }

  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const max = (xs) => Math.max(...xs)
  const kb = (n) => (n / 1024).toFixed(1)
  console.log(`machine: ${os.cpus().length} x ${os.cpus()[0].model}, load ${os.loadavg()[0].toFixed(2)}`)
  console.log(`first load (sign-in page, empty cache): ${load.length} files, ${kb(load.reduce((s, e) => s + e.transfer, 0))} KiB transferred `
    + `(${kb(load.reduce((s, e) => s + e.body, 0))} KiB compressed bodies, ${kb(load.reduce((s, e) => s + e.decoded, 0))} KiB decoded)`)
  for (const e of load) console.log(`  ${e.name.replace(server.url, '')}: ${kb(e.transfer)} KiB (${kb(e.decoded)} KiB decoded)`)
  const render = samples.map((s) => s.render)
  const total = samples.map((s) => s.sinceNavigation)
  console.log(`list of ${count}: render (data in hand to rows painted) median ${median(render).toFixed(1)} ms, max ${max(render).toFixed(1)} ms;`
    + ` from navigation (page load, 10 list pages, render) median ${median(total).toFixed(1)} ms, max ${max(total).toFixed(1)} ms; ${runs} reloads`)
  const pct = (xs, p) => { const v = [...xs].sort((a, b) => a - b); return v[Math.min(v.length - 1, Math.floor(p * v.length))] }
  const FRAME = 1000 / 60
  console.log(`scroll: window from the list's top to its bottom and back, ${scrollPx} px per animation frame, `
    + `${scrollRuns} pass(es) per console${consoles.length > 1 ? ', consoles in turn' : ''}; viewport `
    + `${viewport.width}x${viewport.height}, Chromium ${version}`)
  for (const [i, c] of consoles.entries()) {
    const runsOf = scrolls[i]
    const iv = runsOf.flatMap((s) => s.intervals)
    const lt = runsOf.flatMap((s) => s.longTasks)
    const lf = runsOf.flatMap((s) => s.loafs)
    const gaps = runsOf.flatMap((s) => s.gaps)
    const secs = runsOf.reduce((t, s) => t + s.elapsed, 0) / 1000
    console.log(`  ${c.name}: ${iv.length} frames in ${secs.toFixed(1)} s (${(iv.length / secs).toFixed(1)} fps), ${runsOf.reduce((t, s) => t + s.steps, 0)} steps `
      + `over ${runsOf[0].height} px; frame interval p50 ${pct(iv, 0.5).toFixed(1)} / p95 ${pct(iv, 0.95).toFixed(1)} / `
      + `max ${Math.max(...iv).toFixed(1)} ms; over 1.5 frames (${(1.5 * FRAME).toFixed(1)} ms) ${iv.filter((x) => x > 1.5 * FRAME).length}, `
      + `over 50 ms ${iv.filter((x) => x > 50).length}`)
    console.log(`    long tasks ${lt.length}, ${lt.reduce((t, e) => t + e.duration, 0).toFixed(0)} ms in all; long animation frames `
      + `${lf.length}, ${lf.reduce((t, e) => t + e.duration, 0).toFixed(0)} ms (blocking ${lf.reduce((t, e) => t + e.blocking, 0).toFixed(0)} ms); `
      + `steps with rows missing in the viewport ${gaps.length}${gaps.length ? ` (largest gap ${Math.max(...gaps.map((g) => g.gap))} px)` : ''}`)
    const per = (k) => (runsOf.reduce((t, s) => t + s.work[k], 0) / iv.length).toFixed(1)
    console.log(`    main thread per frame (CDP metrics): tasks ${per('TaskDuration')} ms, script ${per('ScriptDuration')}, `
      + `style ${per('RecalcStyleDuration')}, layout ${per('LayoutDuration')}`)
  }
} finally {
  for (const b of browsers) await b.close()
  await server.stop()
}
