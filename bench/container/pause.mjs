// Pause through the unmodified npm `e2b` SDK, and where its time goes. One sandbox with a background `sleep` is paused
// and resumed (connect + commands.run('true')) n times against the server jar on loopback; for every pause the
// server's own log gives the orchestrator's time (PauseOperation, "sandbox paused" took_ms), the backend's checkpoint
// and each release part (GenerationPause, "container sandbox paused") and the dump command with CRIU's own time in it
// (RuncRuntime, "container dumped"; "container checkpointed" from builds that ran CRIU through runc). CPU time (the
// server JVM plus its waited-for children: CRIU, runc, umount, sync, ip, nft) is read from /proc/<server>/stat around
// each pause: it does not depend on the machine's load, wall times do. Builds that keep a paused sandbox's logs
// (PausedLogs, "logs kept at pause") also give the time that fetch took; later builds copy envd's journal file out of
// the stopped sandbox instead ("journal_ms" of the backend's line). Each run claims a benchmark lane L
// (bench/lib/lane.mjs, shared with bench/container/run.sh) and the server runs with that lane's names (netns prefix
// aenvpL, runc dir /run/agentenv/bench-pause-L, cgroup parent agentenv-bench-pause-L, container ids bpseL-*, network
// slots 10752 + 16 L), so concurrent runs never collide. Needs root, scripts/setup-host.sh and the built jars:
//   mvn -B -q -DskipTests package && node bench/container/pause.mjs [iterations] [full-journal] [commands=<k>]
// It also counts CRIU's tmpfs archives in each pause's images (those not empty each cost a `tar` at dump and resume).
// Before/after against another build and CRIU: AENV_BENCH_HOST_ENV=<a copy of host.env naming that CRIU> node
// <that checkout>/bench/container/pause.mjs [iterations] (that checkout's jars built; its older log lines are read).
import { join } from 'node:path'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { loadavg } from 'node:os'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startBenchServer } from '../lib/container-server.mjs'
import { claimLane, LAYOUTS } from '../lib/lane.mjs'

const n = Number(process.argv[2] ?? 30)
const options = process.argv.slice(3)
// 'full-journal': before every pause the sandbox prints ~1.3 MB, so envd's log journal (1 MiB) is full when the pause
// keeps it: the worst case of the "logs kept at pause" row
const fullJournal = options.includes('full-journal')
// 'commands=<k>': the sandbox runs k commands (`commands.run('true')`) before the warm-up, so envd has been used (its
// dirty memory, which CRIU dumps, grows with use) and its journal holds a few thousand entries
const commandsFirst = Number(options.find((o) => o.startsWith('commands='))?.slice('commands='.length) ?? 0)
for (const o of options) {
  if (o !== 'full-journal' && !/^commands=\d+$/.test(o)) throw new Error(`unknown option ${o} (full-journal, commands=<k>)`)
}
delete process.env.E2B_DEBUG
const lane = await claimLane()
const server = await startBenchServer(lane, LAYOUTS.pause, {
  poolSize: 0,
  maxSandboxes: 8,
  // for before/after runs against another CRIU build: a copy of the host setup's host.env naming it
  env: process.env.AENV_BENCH_HOST_ENV ? { AENV_BACKEND_HOST_ENV: process.env.AENV_BENCH_HOST_ENV } : {},
})
const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 }

/**
 * CRIU's tmpfs archives in the images of the newest pause under the server's data dir: each one that is not the
 * constant empty archive (criu-patches/0003, 29 bytes) cost a `tar` process at the dump and another at the restore.
 */
function tmpfsArchives() {
  const SKIP = new Set(['rootfs', 'upper', 'layer', 'layers', 'disk', 'envd', 'lib'])
  const found = []
  const walk = (dir, depth) => {
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch (e) {
      if (e.code === 'ENOENT') return // a dir the pause's release removes meanwhile (the sandbox dir)
      throw e
    }
    for (const e of entries) {
      if (e.isDirectory() && depth < 8 && !SKIP.has(e.name)) walk(join(dir, e.name), depth + 1)
      else if (e.isFile() && e.name === 'inventory.img' && dir.endsWith('/images')) found.push(dir)
    }
  }
  walk(server.dataDir, 0)
  if (found.length === 0) return null
  const newest = found.map((d) => ({ d, t: statSync(join(d, 'inventory.img')).mtimeMs })).sort((a, b) => b.t - a.t)[0].d
  const archives = readdirSync(newest).filter((f) => /^tmpfs-dev-\d+\.tar\.gz\.img$/.test(f))
  return { all: archives.length, tarred: archives.filter((f) => statSync(join(newest, f)).size !== 29).length }
}

const ticksPerMs = 100 / 1000 // USER_HZ
function cpuMs() {
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number)
  return { server: (utime + stime) / ticksPerMs, children: (cutime + cstime) / ticksPerMs }
}

/** The key=value pairs of the server log lines matching {@code pattern} (logger and message) after {@code from}. */
function logged(pattern, from) {
  return server.output().slice(from).split('\n').filter((l) => pattern.test(l))
    .map((l) => Object.fromEntries([...l.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])))
}

const stats = (samples) => {
  const s = [...samples].sort((a, b) => a - b)
  const pct = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]
  return { n: s.length, p50: pct(0.5), p95: pct(0.95), mean: s.reduce((a, b) => a + b, 0) / s.length }
}
const fmt = (x) => x.toFixed(1).padStart(7)
function report(what, samples) {
  const { n: count, p50, p95, mean } = stats(samples)
  console.log(`${what.padEnd(58)} n=${String(count).padStart(3)}  p50 ${fmt(p50)}  p95 ${fmt(p95)}  mean ${fmt(mean)} ms`)
}

try {
  const sbx = await Sandbox.create('base', { ...opts, timeoutMs: 3_600_000 })
  await sbx.commands.run('sleep 100000', { background: true })
  for (let i = 0; i < commandsFirst; i++) await sbx.commands.run('true')
  for (let i = 0; i < 3; i++) { // warm-up: the server's code paths and CRIU's page cache
    await sbx.pause()
    await sbx.connect()
    await sbx.commands.run('true')
  }
  const load = loadavg()
  const measuredFrom = server.output().length
  const rows = { sdk: [], orchestrator: [], backend: [], checkpoint: [], runc: [], release: [], criu: [], aroundCriu: [], slot: [], container: [],
    unmount: [], diskReleaseWait: [], move: [], sync: [], remove: [], keptLogs: [], keptEntries: [], journal: [], journalBytes: [], criuFrozen: [], criuMemdump: [], criuMemwrite: [], criuPages: [], cpuServer: [], cpuChildren: [], resume: [], tmpfsAll: [], tmpfsTarred: [] }
  for (let i = 0; i < n; i++) {
    if (fullJournal) await sbx.commands.run('seq 1 200000')
    const mark = server.output().length
    const cpu0 = cpuMs()
    let t0 = performance.now()
    await sbx.pause()
    rows.sdk.push(performance.now() - t0)
    const cpu1 = cpuMs()
    rows.cpuServer.push(cpu1.server - cpu0.server)
    rows.cpuChildren.push(cpu1.children - cpu0.children)
    const archives = tmpfsArchives()
    if (archives) { rows.tmpfsAll.push(archives.all); rows.tmpfsTarred.push(archives.tarred) }
    const [op] = logged(/ PauseOperation sandbox paused /, mark)
    const [be] = logged(/ (GenerationPause|ContainerSandbox) container sandbox paused /, mark) // the latter: older builds
    const [rc] = logged(/ RuncRuntime container (dumped|checkpointed) /, mark)
    if (!op || !be || !rc) throw new Error(`pause ${i}: a log line is missing:\n${server.output().slice(mark)}`)
    rows.orchestrator.push(Number(op.took_ms))
    rows.checkpoint.push(Number(be.checkpoint_ms))
    rows.release.push(Number(be.release_ms))
    rows.backend.push(Number(be.checkpoint_ms) + Number(be.release_ms))
    rows.runc.push(Number(rc.took_ms))
    rows.criu.push(Number(rc.criu_ms))
    if (rc.criu_frozen_ms !== undefined) { // CRIU's own stats-dump (later builds)
      rows.criuFrozen.push(Number(rc.criu_frozen_ms))
      rows.criuMemdump.push(Number(rc.criu_memdump_ms))
      rows.criuMemwrite.push(Number(rc.criu_memwrite_ms))
      rows.criuPages.push(Number(rc.criu_pages_written))
    }
    rows.aroundCriu.push(Number(rc.took_ms) - Number(rc.criu_ms))
    for (const k of ['slot', 'container', 'unmount', 'move', 'sync', 'remove']) {
      if (be[`${k}_ms`] !== undefined) rows[k].push(Number(be[`${k}_ms`])) // later builds: slot, container, remove after the answer
    }
    if (be.disk_release_wait_ms !== undefined) rows.diskReleaseWait.push(Number(be.disk_release_wait_ms)) // later builds
    const [kept] = logged(/ PausedLogs logs kept at pause /, mark) // absent in older builds, and when the fetch failed
    if (kept) { rows.keptLogs.push(Number(kept.took_ms)); rows.keptEntries.push(Number(kept.entries)) }
    if (be.journal_ms !== undefined) { rows.journal.push(Number(be.journal_ms)); rows.journalBytes.push(Number(be.journal_bytes)) }
    t0 = performance.now()
    await sbx.connect()
    await sbx.commands.run('true')
    rows.resume.push(performance.now() - t0)
  }
  console.log(`pause, n=${n}${commandsFirst ? `, after ${commandsFirst} commands` : ''}${fullJournal ? ', full journal' : ''}, load average at start ${load.map((l) => l.toFixed(2)).join(' ')}, at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  report('SDK pause() (what the user sees)', rows.sdk)
  report('  orchestrator PauseOperation (CAS, backend, SQLite, hooks)', rows.orchestrator)
  if (rows.keptLogs.length > 0) {
    report('  logs kept at pause (fetch from envd + write, before the checkpoint)', rows.keptLogs)
    console.log(`    entries kept per pause: ${Math.min(...rows.keptEntries)}..${Math.max(...rows.keptEntries)}${fullJournal ? ' (full journal)' : ''}`)
  }
  report('  backend pause (checkpoint + release)', rows.backend)
  report('    checkpoint (freeze, runc checkpoint, thaw)', rows.checkpoint)
  report('      dump command (CRIU direct; runc checkpoint before)', rows.runc)
  report('        CRIU itself (its log: first to last line)', rows.criu)
  if (rows.criuFrozen.length > 0) {
    report('          CRIU stats: frozen (the whole dump, to the kill)', rows.criuFrozen)
    report('          CRIU stats: memory dump (collecting the pages)', rows.criuMemdump)
    report('          CRIU stats: memory write (writing them out)', rows.criuMemwrite)
    const pages = stats(rows.criuPages)
    console.log(`          CRIU stats: pages written p50 ${pages.p50} (${(pages.p50 * 4 / 1024).toFixed(1)} MiB), min ${Math.min(...rows.criuPages)}, max ${Math.max(...rows.criuPages)}`)
  }
  if (rows.tmpfsAll.length > 0) {
    console.log(`          tmpfs archives per pause: ${Math.min(...rows.tmpfsAll)}..${Math.max(...rows.tmpfsAll)}, of them archived by a tar process (not empty): ${Math.min(...rows.tmpfsTarred)}..${Math.max(...rows.tmpfsTarred)} (each also extracted by tar at the resume)`)
  }
  report('        around CRIU (process start, runc if any, reading state)', rows.aroundCriu)
  // builds that release the slot, the container and the sandbox dir after the answer log them when done
  const after = logged(/ GenerationPause paused container sandbox released /, measuredFrom)
  const releasedLater = after.length > 0
  report(releasedLater ? '    release before the answer (journal, unmount, move, sync)' : '    release (parallel parts, joined)', rows.release)
  if (rows.journal.length > 0) {
    report('      first: envd\'s journal file copied into the artifact dir', rows.journal)
    console.log(`        bytes kept per pause: ${Math.min(...rows.journalBytes)}..${Math.max(...rows.journalBytes)} (-1: no journal file)`)
  }
  if (!releasedLater) {
    report('      slot: nft chain and netns (veth after the return)', rows.slot)
    report('      runc delete', rows.container)
  }
  report('      unmount (overlay, and the disk where there is one)', rows.unmount)
  if (rows.diskReleaseWait.length > 0) {
    report('        of which: the disk\'s filesystem alive after its unmount (a copy in another mount namespace)', rows.diskReleaseWait)
    console.log(`          pauses that waited for it: ${rows.diskReleaseWait.filter((w) => w > 0).length} of ${n}`)
  }
  report('      move upper or disk image, and layers, into the artifact dir', rows.move)
  report('      then: syncfs of the artifact dir (durable)', rows.sync)
  if (!releasedLater) report('      then, alongside: remove the sandbox dir, unclaim', rows.remove)
  if (releasedLater) {
    report('    after the answer (a resume waits for it): all of it', after.map((l) => Number(l.took_ms)))
    report('      slot: nft chain and netns', after.map((l) => Number(l.slot_ms)))
    report('      runc delete', after.map((l) => Number(l.container_ms)))
    report('      then: remove the sandbox dir, unclaim', after.map((l) => Number(l.remove_ms)))
    const waits = logged(/ GenerationStart resume waited for its pause's release /, measuredFrom).map((l) => Number(l.waited_ms))
    console.log(`    resumes that waited for that release: ${waits.length} of ${n}` +
      (waits.length > 0 ? `, waited p50 ${stats(waits).p50} / max ${Math.max(...waits)} ms (inside the resume row)` : ''))
  }
  report('CPU per pause: server JVM (user + sys)', rows.cpuServer)
  report('CPU per pause: waited-for children (CRIU, runc, sync, ip, nft)', rows.cpuChildren)
  report('resume (connect + commands.run true)', rows.resume)
  await sbx.kill()
} catch (e) {
  console.error(`${e.stack ?? e}\nserver log (tail):\n${server.output().split('\n').slice(-60).join('\n')}`)
  process.exitCode = 1
} finally {
  await server.stop({ timeoutMs: 120_000 })
}
