// Time to interactive (`Sandbox.create(name)` + `commands.run('true')`, the unmodified npm `e2b` SDK against the server
// jar on loopback) from built custom templates against `base`, alternating in one run: each round creates one sandbox
// of each, sequentially, in a rotating order, 500 ms apart (the warm pools refill as between users' creates, as in
// bench/container/sdk.mjs), and kills each after its first command. The custom templates, built with `Template.build`
// before the timing:
//   custom-base   `Template().fromBaseImage()` with a RUN step and ENV (a user's template on this server's base);
//   custom-image  e2e/lib/registry.mjs's busybox image (pushed to a docker-registry this script starts on 127.0.0.1)
//                 with a RUN step and ENV (a template from an OCI image).
// Each is created 3 times before the timed rounds (as sdk.mjs warms `base`). Target: each custom template's TTI p50
// within 10 % of base's. The server runs on a benchmark lane (lane layout `templates`, bench/lib/lane.mjs) with a warm
// pool of 2 per template (AENV_BACKEND_POOL_SIZE). Needs root, scripts/setup-host.sh, skopeo, umoci, docker-registry
// and the built jars; hold the container e2e lock so that no e2e suite runs meanwhile:
//   flock /tmp/agentenv-container-e2e.lock node bench/templates/tti.mjs [rounds=20]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox, Template } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startRegistry, busyboxRootfs } from '../../e2e/lib/registry.mjs'
import { claimLane } from '../lib/lane.mjs'
import { startTemplatesServer, sdkOptions, p50, load, endRun } from './common.mjs'

const rounds = Number(process.argv[2] ?? 20)
delete process.env.E2B_DEBUG

const lane = await claimLane()
const work = mkdtempSync(join(tmpdir(), 'aenv-bench-tti-'))
const registry = await startRegistry()
let server
let failure
try {
  const image = await registry.push('bench/busybox:1', busyboxRootfs(work), { env: ['PATH=/bin'] })
  server = await startTemplatesServer(lane)
  const opts = sdkOptions(server)
  await Template.build(Template().fromBaseImage().setEnvs({ APP_MODE: 'bench' })
    .runCmd('echo "built by $(whoami)" > /home/user/built.txt'), 'custom-base', opts)
  await Template.build(Template().fromImage(image).setEnvs({ APP_MODE: 'bench' })
    .runCmd('mkdir -p /srv/app && echo "built by $(whoami)" > /srv/app/built.txt', { user: 'root' }), 'custom-image', opts)
  const names = ['base', 'custom-base', 'custom-image']
  for (const name of names) for (let i = 0; i < 3; i++) await (await Sandbox.create(name, opts)).kill()
  console.log(`tti: ${rounds} rounds of ${names.join(', ')} (rotating order), load ${load()}`)

  const tti = Object.fromEntries(names.map((n) => [n, []]))
  const creates = Object.fromEntries(names.map((n) => [n, []]))
  for (let r = 0; r < rounds; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length])
    const line = []
    for (const name of order) {
      await sleep(500)
      const t0 = performance.now()
      const sbx = await Sandbox.create(name, opts)
      const created = performance.now()
      await sbx.commands.run('true')
      const t1 = performance.now()
      await sbx.kill()
      tti[name].push(t1 - t0)
      creates[name].push(created - t0)
      line.push(`${name} ${(t1 - t0).toFixed(1)}`)
    }
    console.log(`round ${r}: ${line.join(', ')} ms`)
  }
  const base = p50(tti.base)
  console.log(`\nload at the end ${load()}; p50 over ${rounds} rounds (TTI, of which Sandbox.create; p95 TTI):`)
  for (const name of names) {
    const sorted = [...tti[name]].sort((a, b) => a - b)
    const p95 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]
    const vs = name === 'base' ? '' : `: ${((p50(tti[name]) / base - 1) * 100).toFixed(1)} % vs base, target ≤ +10 % `
      + (p50(tti[name]) <= 1.1 * base ? 'met' : 'not met')
    console.log(`  ${name}: ${p50(tti[name]).toFixed(1)} ms (create ${p50(creates[name]).toFixed(1)} ms; p95 ${p95.toFixed(1)} ms)${vs}`)
  }
} catch (e) {
  failure = e
} finally {
  await endRun('tti', { server, registry, work }, failure)
}
