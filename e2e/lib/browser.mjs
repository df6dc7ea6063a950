// Debian's Chromium (/usr/bin/chromium, `apt-get install -y chromium`; never a browser download) driven headless by
// the npm playwright-core, with a fresh profile per launch. Used by the console's browser suite and its benchmark.
//
//   const browser = await launchChromium()
//   const page = await browser.context.newPage() ... await browser.close()
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

/** Why Chromium cannot be launched here, or null. */
export function chromiumMissing() {
  return existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (apt-get install -y chromium)`
}

export async function launchChromium({ viewport = { width: 1400, height: 900 } } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'aenv-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  return {
    context,
    async close() {
      await context.close().catch(() => {})
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
