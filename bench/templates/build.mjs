// A template build from a cached image, then an unchanged rebuild, with the unmodified npm `e2b` SDK's
// `Template.build` against the server jar on loopback. The image is e2e/lib/registry.mjs's busybox image, pushed to a
// docker-registry this script starts on 127.0.0.1 and pulled once before any timing (a build of it without steps), so
// the timed builds find it in the image store. Each round builds a new name `bench-build-<round>` from the image with
// three RUN steps and a COPY of a small context dir (three files, a few KiB), and times `Template.build` from its call
// to its return (the build is ready: request, the SDK's file hash and upload, the build, its 200 ms status polls);
// then builds the same name again with the same steps and files (the upload is skipped: the server has them) and times
// that as the rebuild. Beside each, the server's own time from the build log's first line to "template ... is ready".
// Targets: build ≤ 10 s, rebuild ≤ 2 s (p50). The server runs on a benchmark lane (lane layout `templates`,
// bench/lib/lane.mjs). Needs root, scripts/setup-host.sh, skopeo, umoci, docker-registry and the built jars; hold the
// container e2e lock so that no e2e suite runs meanwhile:
//   flock /tmp/agentenv-container-e2e.lock node bench/templates/build.mjs [rounds=5]
// AENV_BENCH_SHOW_LOG=1 prints each build's log with its server timestamps.
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Sandbox, Template } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startRegistry, busyboxRootfs } from '../../e2e/lib/registry.mjs'
import { claimLane } from '../lib/lane.mjs'
import { startTemplatesServer, sdkOptions, buildLog, p50, ms, load, endRun } from './common.mjs'

const rounds = Number(process.argv[2] ?? 5)
delete process.env.E2B_DEBUG

const lane = await claimLane()
const work = mkdtempSync(join(tmpdir(), 'aenv-bench-build-'))
const registry = await startRegistry()
let server
let failure
try {
  const image = await registry.push('bench/busybox:1', busyboxRootfs(work), { env: ['PATH=/bin'] })
  const context = join(work, 'context')
  mkdirSync(join(context, 'app', 'conf'), { recursive: true })
  writeFileSync(join(context, 'app', 'main.sh'), '#!/bin/sh\necho "app $(cat /srv/app/conf/name.txt)"\n')
  writeFileSync(join(context, 'app', 'conf', 'name.txt'), 'bench\n')
  writeFileSync(join(context, 'app', 'README'), 'x'.repeat(4096))
  server = await startTemplatesServer(lane)
  const opts = sdkOptions(server)
  await Template.build(Template().fromImage(image), 'bench-build-image', opts) // the image into the store
  console.log(`build: ${rounds} rounds of build + unchanged rebuild from the cached ${image}, load ${load()}`)

  // each round's first step is its own (the round number in it), so that a round's build finds no cached layer of an
  // earlier round's and its rebuild finds all of its own
  const template = (round) => Template({ fileContextPath: context })
    .fromImage(image)
    .runCmd(`mkdir -p /srv/app && echo "built by $(whoami) in round ${round}" > /srv/app/built.txt`, { user: 'root' })
    .runCmd('ls /bin > /srv/app/tools.txt', { user: 'root' })
    .copy('app', '/srv/app/', { user: 'root' })
    .runCmd('sh /srv/app/main.sh > /srv/app/ran.txt && grep -q "app bench" /srv/app/ran.txt', { user: 'root' })

  /** One Template.build of {@code name}: the SDK's wall time and the server's, from the build log. */
  async function timedBuild(name, round) {
    const start = performance.now()
    const { templateId, buildId } = await Template.build(template(round), name, opts)
    const took = performance.now() - start
    const log = await buildLog(server, templateId, buildId)
    if (process.env.AENV_BENCH_SHOW_LOG) for (const e of log) console.log(`  +${e.ms - log[0].ms} ms ${e.message}`)
    const ready = log.find((e) => / is ready$/.test(e.message))
    return { sdk: took, server: ready.ms - log[0].ms, templateId }
  }

  const rows = []
  for (let r = 0; r < rounds; r++) {
    const name = `bench-build-${r}`
    const first = await timedBuild(name, r)
    const again = await timedBuild(name, r)
    const sbx = await Sandbox.create(name, opts) // the rebuilt template works
    try {
      const check = await sbx.commands.run('cat /srv/app/ran.txt /srv/app/built.txt')
      if (check.stdout !== `app bench\nbuilt by root in round ${r}\n`) throw new Error(`unexpected template contents: ${check.stdout}`)
    } finally {
      await sbx.kill()
    }
    rows.push({ first, again })
    console.log(`round ${r} (load ${load()}): build ${ms(first.sdk)} (server ${ms(first.server)}), `
      + `rebuild ${ms(again.sdk)} (server ${ms(again.server)})`)
  }
  const build = p50(rows.map((x) => x.first.sdk))
  const rebuild = p50(rows.map((x) => x.again.sdk))
  console.log(`\np50 over ${rows.length} rounds: build ${ms(build)} (server ${ms(p50(rows.map((x) => x.first.server)))}), `
    + `rebuild ${ms(rebuild)} (server ${ms(p50(rows.map((x) => x.again.server)))}); load at the end ${load()}`)
  console.log(`targets: build ≤ 10 s ${build <= 10_000 ? 'met' : 'not met'}, rebuild ≤ 2 s ${rebuild <= 2_000 ? 'met' : 'not met'}`)
} catch (e) {
  failure = e
} finally {
  await endRun('build', { server, registry, work }, failure)
}
