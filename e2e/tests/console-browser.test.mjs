// The web console in a real browser: Debian's Chromium, headless, driven by playwright-core, against the server jar
// with the real container backend. One sandbox created through the unmodified `e2b` SDK is shared by every step:
// sign-in (a wrong key is refused), the live list (the new sandbox appears within 2 s), pause and resume from the UI,
// the terminal (echo hi; reattached after a pause and resume), an upload seen by the SDK's files.list, the charts
// drawing after a few samples, and sandbox-controlled text (metadata, a file name) rendered as text. No page may
// trip the Content-Security-Policy. Screenshots of each page go to e2e/artifacts/console/ (AENV_E2E_ARTIFACTS to
// choose another directory).
// Needs root, scripts/setup-host.sh and /usr/bin/chromium (scripts/test.sh installs it); skipped otherwise (failed
// when AENV_REQUIRE_HOST_TESTS=1). Run under `flock /tmp/agentenv-container-e2e.lock` next to other container runs.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { Sandbox } from 'e2b'
import { startSuiteServer, stopSuiteServer } from '../lib/container-suite.mjs'
import { unready } from '../lib/host-tests.mjs'
import { repoRoot } from '../lib/control-plane-harness.mjs'
import { chromiumMissing, launchChromium } from '../lib/browser.mjs'

const LANE = {
  namePrefix: 'aenvw',
  runDir: '/run/agentenv/e2e-console',
  cgroupParent: 'agentenv-e2e-console',
  firstSlot: 13312,
  idPrefix: 'web-',
}
const XSS_META = '<img src=x onerror="window.__xss=1">'
const XSS_FILE = '<img src=x onerror=window.__xss=2>.txt'
const ARTIFACTS = process.env.AENV_E2E_ARTIFACTS ?? join(repoRoot, 'e2e', 'artifacts', 'console')

const missing = unready ?? chromiumMissing()
if (missing && process.env.AENV_REQUIRE_HOST_TESTS === '1') throw new Error(`the console's browser suite is required but ${missing}`)
const step = (name, fn) => test(name, { skip: missing ? `browser test skipped: ${missing}` : false, timeout: 180_000 }, fn)

let server
let opts
let browser
let page
let sbx
const cspViolations = []

before(async () => {
  if (missing) return
  mkdirSync(ARTIFACTS, { recursive: true })
  ;({ server, opts } = await startSuiteServer(LANE, {
    AENV_BACKEND_MAX_SANDBOXES: '8',
    AENV_BACKEND_POOL_SIZE: '1',
    AENV_METRICS_SAMPLE_INTERVAL_MS: '500',
  }))
  browser = await launchChromium()
  page = await browser.context.newPage()
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()) })
  page.on('pageerror', (e) => cspViolations.push(`page error: ${e.message}`))
})

after(async () => {
  await sbx?.kill().catch(() => {})
  await browser?.close()
  if (server) await stopSuiteServer(server, LANE)
})

const shot = (name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true })
const row = () => page.locator(`[data-testid="sandbox-row"][data-id="${sbx.sandboxId}"]`)

step('a wrong key is refused with the reason; the right one signs in and is kept out of URLs and cookies', async () => {
  await page.goto(`${server.url}/console/`)
  await page.fill('#api-key', 'e2b_wrong_key_0123456789abcdef')
  await page.click('button[type=submit]')
  await page.getByTestId('login-error').waitFor()
  assert.match(await page.getByTestId('login-error').textContent(), /Wrong API key: invalid API key/)
  await shot('sign-in')

  await page.fill('#api-key', server.apiKey)
  await page.click('button[type=submit]')
  await page.getByTestId('sandbox-table').waitFor()
  assert.ok(!page.url().includes(server.apiKey))
  assert.equal(await page.evaluate(() => document.cookie), '')
  assert.equal(await page.evaluate(() => localStorage.length), 0)
})

step('a sandbox created through the SDK appears within 2 s, its metadata rendered as text', async () => {
  sbx = await Sandbox.create('base', { ...opts, metadata: { owner: 'console-e2e', note: XSS_META } })
  await row().waitFor({ timeout: 2000 })
  assert.equal(await row().getAttribute('data-state'), 'running')
  const meta = row().getByTestId('metadata')
  assert.equal(await meta.textContent(), `note=${XSS_META} owner=console-e2e`)
  assert.equal(await meta.locator('img').count(), 0)
  assert.equal(await page.evaluate(() => window.__xss), undefined)

  await page.getByTestId('filter-metadata').fill('owner=console-e2e')
  await row().waitFor()
  await page.getByTestId('filter-metadata').fill('owner=nobody')
  await row().waitFor({ state: 'detached' })
  await page.getByTestId('filter-metadata').fill('')
  await page.getByTestId('filter-state').selectOption('paused')
  await row().waitFor({ state: 'detached' })
  await page.getByTestId('filter-state').selectOption('')
  await row().waitFor()
  await shot('sandboxes')
})

step('pause and resume from the list: the state changes in the UI and for the SDK', async () => {
  await row().getByTestId('pause').click()
  await row().getByTestId('confirm-pause').click()
  await page.locator(`[data-testid="sandbox-row"][data-id="${sbx.sandboxId}"][data-state="paused"]`).waitFor({ timeout: 60_000 })
  assert.equal((await Sandbox.getInfo(sbx.sandboxId, opts)).state, 'paused')
  await shot('sandboxes-paused')

  await row().getByTestId('resume').click()
  await page.locator(`[data-testid="sandbox-row"][data-id="${sbx.sandboxId}"][data-state="running"]`).waitFor({ timeout: 60_000 })
  assert.equal((await Sandbox.getInfo(sbx.sandboxId, opts)).state, 'running')
})

async function terminalText() {
  return page.locator('.xterm-rows').innerText()
}

async function typeInTerminal(text) {
  await page.locator('.xterm-helper-textarea').focus()
  await page.keyboard.type(text)
  await page.keyboard.press('Enter')
}

async function waitForLine(line, timeout = 30_000) {
  const deadline = Date.now() + timeout
  for (;;) {
    const lines = (await terminalText()).split('\n').map((l) => l.trimEnd())
    if (lines.includes(line)) return
    if (Date.now() > deadline) assert.fail(`the terminal never showed the line ${JSON.stringify(line)}:\n${lines.join('\n')}`)
    await page.waitForTimeout(100)
  }
}

step('the terminal runs echo hi, and reattaches to the same shell after a pause and resume', async () => {
  await row().locator('a').first().click()
  await page.getByTestId('tab-terminal').click()
  await page.locator('[data-testid="terminal-status"]:text-is("connected")').waitFor({ timeout: 30_000 })
  await typeInTerminal('echo hi')
  await waitForLine('hi')
  await typeInTerminal('export MARK=kept; echo "marked $MARK"')
  await waitForLine('marked kept')
  await shot('terminal')

  await sbx.pause()
  await page.locator('[data-testid="terminal-status"]:text-is("disconnected")').waitFor({ timeout: 60_000 })
  await Sandbox.connect(sbx.sandboxId, opts)
  await page.locator('[data-testid="terminal-status"]:text-is("connected")').waitFor({ timeout: 60_000 })
  await typeInTerminal('echo "again $MARK"')
  await waitForLine('again kept')
})

step('an upload from the file browser is seen by the SDK, and its hostile name is rendered as text', async () => {
  await page.getByTestId('tab-files').click()
  await page.getByTestId('files-table').waitFor()
  await page.getByTestId('upload').setInputFiles({ name: XSS_FILE, mimeType: 'text/plain', buffer: Buffer.from('uploaded from the console\n') })
  const fileRow = page.locator('[data-testid="file-row"]').filter({ hasText: XSS_FILE })
  await fileRow.waitFor({ timeout: 30_000 })
  assert.equal(await fileRow.locator('img').count(), 0)
  assert.equal(await page.evaluate(() => window.__xss), undefined)
  const names = (await sbx.files.list('/home/user')).map((e) => e.name)
  assert.ok(names.includes(XSS_FILE), `files.list: ${JSON.stringify(names)}`)
  assert.equal(await sbx.files.read(`/home/user/${XSS_FILE}`), 'uploaded from the console\n')
  await shot('files')
})

step('processes are listed', async () => {
  await page.getByTestId('tab-processes').click()
  await page.locator('[data-testid="process-row"]').filter({ hasText: '/bin/bash -i -l' }).first().waitFor({ timeout: 15_000 })
  await shot('processes')
})

step('the CPU, memory and disk charts draw after a few samples', async () => {
  await page.getByTestId('tab-metrics').click()
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="sample-count"]')?.textContent.split(' ')[0]) >= 3,
    null, { timeout: 60_000 })
  for (const name of ['cpu', 'memory', 'disk']) {
    const painted = await page.getByTestId(`chart-${name}`).locator('canvas').evaluate((c) => {
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data
      let n = 0
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++
      return n
    })
    assert.ok(painted > 100, `chart ${name}: ${painted} painted pixels`)
  }
  await shot('sandbox-metrics')
  await page.getByTestId('tab-logs').click()
  await page.locator('[data-testid="logs"] .log').first().waitFor({ timeout: 30_000 })
  await shot('sandbox-logs')
})

step('templates, snapshots and host views render', async () => {
  await page.goto(`${server.url}/console/#/templates`)
  await page.locator('[data-testid="template-row"]').filter({ hasText: 'base' }).first().waitFor()
  await shot('templates')
  await page.goto(`${server.url}/console/#/snapshots`)
  await page.getByTestId('snapshot-table').waitFor()
  await shot('snapshots')
  await page.goto(`${server.url}/console/#/host`)
  await page.getByTestId('host-slots').waitFor()
  assert.match(await page.getByTestId('host-slots').textContent(), /^\d+ used of 8$/)
  assert.notEqual(await page.getByTestId('host-version').textContent(), '')
  await shot('host')
})

step('no page tripped the Content-Security-Policy, and the server logged no API key', () => {
  assert.deepEqual(cspViolations, [])
  assert.ok(!server.output().includes(server.apiKey), 'the API key is in the server\'s output')
})
