// The web console's speed in Debian's Chromium (headless, playwright-core): the compressed bytes of the first load
// (the sign-in page: everything fetched before a key is typed, from an empty cache), and how long the sandbox list
// takes to show 1,000 sandboxes, from the browser's performance timeline: the marks the list view sets when a poll's
// data arrived (aenv:list-data) and after the rows were rendered and painted (aenv:list-rendered). The list renders
// the rows near the viewport (a screenful plus overscan) and spacers for the rest; the count shown must be all of
// them. The server runs on the mock backend (no real sandboxes: what is measured is the page, not the host).
//
//   node bench/console/list.mjs [--sandboxes N] [--runs R]
//
// Needs the built jars (mvn -B -DskipTests package, or -pl agentenv-server,agentenv-backend-mock -am) and
// /usr/bin/chromium (apt-get install -y chromium); e2e's node_modules (npm ci in e2e) for playwright-core.
import os from 'node:os'
import { startServer } from '../../e2e/lib/control-plane-harness.mjs'
import { launchChromium } from '../../e2e/lib/browser.mjs'

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && Number(args[i + 1]) > 0 ? Number(args[i + 1]) : fallback
}
const count = option('--sandboxes', 1000)
const runs = option('--runs', 7)

const server = await startServer({ backend: 'mock', env: { AENV_DEFAULT_TIMEOUT_V2_SECONDS: '3600' } })
const browser = await launchChromium()
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
} finally {
  await browser.close()
  await server.stop()
}
