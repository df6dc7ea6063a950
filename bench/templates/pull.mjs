// `aenv pull` of a ~100 MB image from a registry on loopback against `skopeo copy` of the same image. Each round makes
// a new image (a busybox-static rootfs and two layers of fresh random, incompressible files, AENV_BENCH_IMAGE_MB in all,
// default 100), pushes it with skopeo to a docker-registry this script starts on 127.0.0.1 (e2e/lib/registry.mjs),
// then measures, in alternating order (A first in even rounds, B first in odd ones):
//   (A) `skopeo copy docker://HOST/img oci:<fresh dir>:img`: what a plain pull costs (no unpack);
//   (B) `bin/aenv pull HOST/img --alias NAME`: the server's pull as a user sees it, from the CLI's spawn to its exit
//       (CLI start-up, the pull into the server's image store, umoci unpack, boot of the image template in a build
//       sandbox and the template's capture);
//   (C) the pull inside (B) as the build log's server timestamps show it: from its first line, "pulling <ref>", to
//       "pulled <ref>" (manifest, config, blobs into the image store, umoci unpack), with the copy ("pulling <ref>
//       (<digest>" to "unpacking") and the unpack ("unpacking" to "pulled") apart; then the rest of the build: the build
//       sandbox ("pulled" to "capturing the template": the image's boot, which prepares it, warms its envd and
//       checkpoints it, and a sandbox restored from that) and the capture (to "template ... is ready").
// Every image is new to both sides (new blobs each round, a fresh oci dir for A, the server's store has not seen them),
// so neither hits a cache; the busybox layer (~1 MB) may repeat. The server runs on a benchmark lane (lane layout
// `templates`, bench/lib/lane.mjs) with its own data dir and image store. Needs root, scripts/setup-host.sh, skopeo,
// umoci, docker-registry and the built jars; hold the container e2e lock so that no e2e suite runs meanwhile:
//   flock /tmp/agentenv-container-e2e.lock node bench/templates/pull.mjs [rounds=5]
// AENV_BENCH_SHOW_LOG=1 prints each build's log with its server timestamps.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, openSync, closeSync, writeSync, rmSync } from 'node:fs'
import { randomFillSync } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startRegistry, busyboxRootfs } from '../../e2e/lib/registry.mjs'
import { claimLane } from '../lib/lane.mjs'
import { startTemplatesServer, aenv, buildLog, entry, p50, ms, load, endRun } from './common.mjs'

const rounds = Number(process.argv[2] ?? 5)
const imageMb = Number(process.env.AENV_BENCH_IMAGE_MB ?? 100)

/** A layer's directory: {@code files} files of fresh random bytes under /data, {@code mb} MiB in all. */
function randomLayer(parent, name, mb, files = 2) {
  const root = join(parent, name)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'data'), { recursive: true })
  const chunk = Buffer.alloc(1 << 20)
  for (let f = 0; f < files; f++) {
    const fd = openSync(join(root, 'data', `${name}-${f}.bin`), 'w')
    for (let i = 0; i < mb / files; i++) writeSync(fd, randomFillSync(chunk))
    closeSync(fd)
  }
  return root
}

function skopeoCopy(ref, work) {
  const dir = mkdtempSync(join(work, 'skopeo-'))
  const start = performance.now()
  execFileSync('skopeo', ['copy', '--src-tls-verify=false', `docker://${ref}`, `oci:${dir}:img`], { stdio: 'ignore' })
  const took = performance.now() - start
  rmSync(dir, { recursive: true, force: true })
  return took
}

const lane = await claimLane()
const work = mkdtempSync(join(tmpdir(), 'aenv-bench-pull-'))
const registry = await startRegistry()
let server
let failure
const rows = []
try {
  server = await startTemplatesServer(lane)
  console.log(`pull: ${rounds} rounds of a ${imageMb} MiB image (3 layers), load ${load()}`)
  const busybox = busyboxRootfs(work)
  for (let r = 0; r < rounds; r++) {
    const layers = [busybox, randomLayer(work, `a${r}`, imageMb / 2), randomLayer(work, `b${r}`, imageMb / 2)]
    const ref = await registry.push(`bench/pull-${r}:1`, layers, { env: ['PATH=/bin'] })
    for (const l of layers.slice(1)) rmSync(l, { recursive: true, force: true })
    const row = { round: r, load: load() }
    const a = () => { row.skopeo = skopeoCopy(ref, work) }
    const b = async () => {
      const run = await aenv(server, ['pull', ref, '--alias', `bench-pull-${r}`])
      row.aenv = run.ms
      const [, templateId, buildId] = run.out.match(/building template (\S+) .*build (\S+)/) ?? []
      if (!buildId) throw new Error(`no build id in the output of aenv pull:\n${run.out}`)
      const log = await buildLog(server, templateId, buildId)
      if (process.env.AENV_BENCH_SHOW_LOG) for (const e of log) console.log(`  +${e.ms - log[0].ms} ms ${e.message}`)
      const pulling = entry(log, 'pulling ') // the build's first line; then "resolving", "pulling <ref> (<digest>"
      const copying = log.find((e) => e.message.startsWith('pulling ') && e.message.includes('(sha256:'))
      const unpacking = entry(log, 'unpacking ')
      const pulled = entry(log, 'pulled ')
      const capturing = entry(log, 'capturing the template')
      const ready = log.find((e) => / is ready$/.test(e.message))
      row.pull = pulled?.ms - pulling?.ms
      row.copy = unpacking?.ms - copying?.ms
      row.unpack = pulled?.ms - unpacking?.ms
      row.boot = capturing?.ms - pulled?.ms
      row.finish = ready?.ms - capturing?.ms
      row.build = ready?.ms - log[0]?.ms
    }
    if (r % 2 === 0) { a(); await b() } else { await b(); a() }
    row.ratio = row.aenv / row.skopeo
    rows.push(row)
    console.log(`round ${r} (${r % 2 === 0 ? 'A first' : 'B first'}, load ${row.load}): (A) skopeo copy ${ms(row.skopeo)}, `
      + `(B) aenv pull ${ms(row.aenv)} = ${row.ratio.toFixed(2)}x A; (C) pull ${ms(row.pull)} = `
      + `${(row.pull / row.skopeo).toFixed(2)}x A (copy ${ms(row.copy)}, unpack ${ms(row.unpack)}); then build sandbox `
      + `${ms(row.boot)}, capture ${ms(row.finish)}; build log ${ms(row.build)}`)
  }
  const col = (k) => p50(rows.map((x) => x[k]))
  console.log(`\np50 over ${rows.length} rounds: (A) skopeo copy ${ms(col('skopeo'))}, (B) aenv pull ${ms(col('aenv'))} `
    + `(B/A per round p50 ${col('ratio').toFixed(2)}x, p50 B / p50 A ${(col('aenv') / col('skopeo')).toFixed(2)}x); `
    + `(C) pull ${ms(col('pull'))} = ${(col('pull') / col('skopeo')).toFixed(2)}x A (copy ${ms(col('copy'))}, `
    + `unpack ${ms(col('unpack'))}); build sandbox ${ms(col('boot'))}, capture ${ms(col('finish'))}, `
    + `build log ${ms(col('build'))}; load at the end ${load()}`)
  console.log(`target: aenv pull ≤ 1.5x skopeo copy (p50): ${col('aenv') <= 1.5 * col('skopeo') ? 'met' : 'not met'}`)
} catch (e) {
  failure = e
} finally {
  await endRun('pull', { server, registry, work }, failure)
}
