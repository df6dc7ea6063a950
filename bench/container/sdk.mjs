// The container backend measured with the unmodified npm `e2b` SDK through the server jar and its sandbox proxy on
// loopback (what a user sees): time to interactive (Sandbox.create + commands.run('true')) sequential and as a 20-way
// burst, commands.run('true') on a running sandbox, pause, resume (connect of a paused sandbox), snapshot, fork x1 and
// x10. Each run claims a benchmark lane L (bench/lib/lane.mjs, shared with bench/container/run.sh) and the server runs
// with that lane's names (netns prefix aenvqL, runc dir /run/agentenv/bench-sdk-L, cgroup parent agentenv-bench-sdk-L,
// container ids bsdkL-*, network slots 10240 + 64 L), so concurrent runs never collide; a warm pool of 2. Needs root,
// scripts/setup-host.sh and the built jars:
//   mvn -B -q -DskipTests package && node bench/container/sdk.mjs [iterations] [exec|disk|tti]
// With `exec` only the commands.run row is measured; with `disk` only the rows that make new sandbox disks (time to
// interactive, snapshot, fork x1 and x10), e.g. with AENV_BACKEND_POOL_SIZE=0 (every create makes its disk) and
// AENV_BACKEND_SPARE_DISKS=0 or N (disks made on the create path, or taken from spares); both are passed through.
// With `tti` only the two time-to-interactive rows, and with them their split: Sandbox.create alone, then each of the
// first AENV_BENCH_SPLIT commands (`commands.run('true')`, default 12) on every new sandbox of the sequential loop (the
// first one is TTI's; the others run after TTI's clock stopped, before the kill), so a cold request path in a new
// sandbox's envd shows as first commands slower than the later ones; also envd's CPU time and minor page faults since
// its restore (read from /proc inside the sandbox: load-insensitive) after create's /init and those k commands, and
// for k more.
// AENV_BENCH_SPLIT=<k> adds the split to any mode.
// AENV_BENCH_SERVER_LOG=<file> keeps the server's log there (its per-step timings are less load-sensitive evidence).
// The 20-way burst runs AENV_BENCH_BURSTS times (default 2, each after AENV_BENCH_BURST_SETTLE_MS of refill, default
// 2000): its row pools every burst's samples (40 by default), and each burst
// prints its own p50 / p95 and CPU. The sequential loop and each burst are followed by the server JVM's CPU by thread
// (schedstat): JIT compiler, virtual threads' carriers (request work), the proxy's client threads, ...
// AENV_BENCH_BURST_WINDOW=<file> writes the last burst's start and end (CLOCK_MONOTONIC seconds) there, e.g. to cut a
// `perf record -k mono` of the server to it.
// The exec row runs after 200 warm-up commands (AENV_BENCH_EXEC_WARMUP) on the same sandbox: the server's JIT is
// still compiling the proxy path for the first few thousand proxied requests (a long-running server is past that;
// bench/exec/exec.mjs shows the breakdown). The row is followed by the server's CPU time per command (warm-up and
// measured; load-insensitive), its time from spawn to ready and the first command's time. BENCH_SERVER_AOT=off and
// BENCH_SERVER_JVM_EXTRA change the server's JVM options (A/B runs). AENV_BACKEND_ENVD_DIR and AENV_BACKEND_HOST_ENV,
// when set, point the backend at another envd build or template cache (A/B runs).
import { readFileSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startBenchServer } from '../lib/container-server.mjs'
import { claimLane, LAYOUTS } from '../lib/lane.mjs'
import { threadCpuMs } from '../lib/proc.mjs'

const n = Number(process.argv[2] ?? 30)
const onlyExec = process.argv[3] === 'exec'
const onlyDisk = process.argv[3] === 'disk'
const onlyTti = process.argv[3] === 'tti'
if (process.argv[3] !== undefined && !onlyExec && !onlyDisk && !onlyTti) throw new Error(`unknown mode ${process.argv[3]} (exec, disk, tti)`)
// commands timed on each new sandbox of the sequential TTI loop (0: only TTI itself)
const splitCommands = Number(process.env.AENV_BENCH_SPLIT ?? (onlyTti ? 12 : 0))
// warm-up commands before the exec row (AENV_BENCH_EXEC_WARMUP, default 200); a few thousand show a long-running server
const execWarmup = Number(process.env.AENV_BENCH_EXEC_WARMUP ?? 200)
delete process.env.E2B_DEBUG
const lane = await claimLane()
const serverStart = performance.now()
const server = await startBenchServer(lane, LAYOUTS.sdk, {
  poolSize: process.env.AENV_BACKEND_POOL_SIZE ?? 2,
  env: {
    ...(process.env.AENV_BACKEND_SPARE_DISKS ? { AENV_BACKEND_SPARE_DISKS: process.env.AENV_BACKEND_SPARE_DISKS } : {}),
    ...(process.env.AENV_BACKEND_HOST_ENV ? { AENV_BACKEND_HOST_ENV: process.env.AENV_BACKEND_HOST_ENV } : {}),
  },
})
const serverReadyMs = performance.now() - serverStart
const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 }
/** The server JVM's CPU time in ms (utime + stime from /proc; its children excluded): load-insensitive. */
const serverCpuMs = () => {
  const f = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

/**
 * CPU ms spent since {@code since} (or the counters now, without it): the whole machine (/proc/stat, every core), the
 * server JVM (utime + stime), its reaped children (cutime + cstime: runc, CRIU, ip, nft), this Node process (the SDK)
 * and the lane's sandboxes (their cgroups' cpuacct: envd and its processes, restored members' tasks).
 */
function burstCpu(since) {
  const tick = 10
  const host = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const machine = (host[0] + host[1] + host[2] + host[5] + host[6]) * tick // user nice system irq softirq
  const f = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  const u = process.cpuUsage()
  let sandboxes = 0 // the lane's cgroup parent, if the backend made it (cgroup v1 cpuacct)
  try {
    sandboxes = Number(readFileSync(`/sys/fs/cgroup/cpuacct/agentenv-bench-sdk-${lane}/cpuacct.usage`, 'utf8')) / 1e6
  } catch (e) {
    if (e.code !== 'ENOENT') throw e
  }
  const c = { machine, server: (Number(f[11]) + Number(f[12])) * tick, children: (Number(f[13]) + Number(f[14])) * tick,
    node: Math.round((u.user + u.system) / 1000), sandboxes: Math.round(sandboxes) }
  return since === undefined ? c : Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v - since[k]]))
}

/**
 * The server JVM's CPU by thread kind (schedstat, ns resolution; thread names as Linux keeps them, 15 characters, with
 * their numbers folded except C1/C2's: "ForkJoinPool-#-" are virtual threads' carriers, "C1 CompilerThre" the JIT)
 * since {@code since}, or the counters now: how much of the server's CPU is compilation rather than request work.
 */
function serverThreadCpu(since) {
  const now = threadCpuMs(server.pid, (tid, name) => name.replace(/(?<!^C)\d+/g, '#'))
  if (since === undefined) return now
  return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - (since[k] ?? 0)]).filter(([, v]) => v >= 0.5)
    .sort((a, b) => b[1] - a[1]))
}
const threadLine = (spent, per = 1) =>
  Object.entries(spent).map(([k, v]) => `${k} ${(v / per).toFixed(per === 1 ? 0 : 2)}`).join(', ')

const rows = []
function report(what, samples, unit = 'ms') {
  const s = [...samples].sort((a, b) => a - b)
  const pct = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]
  const row = { what, n: s.length, p50: pct(0.5).toFixed(1), p95: pct(0.95).toFixed(1), max: s.at(-1).toFixed(1) }
  rows.push(row)
  console.log(`${what.padEnd(60)} n=${String(row.n).padStart(3)}  p50 ${row.p50.padStart(7)} ${unit}  p95 ${row.p95.padStart(7)} ${unit}  max ${row.max.padStart(7)} ${unit}`)
}
const now = () => performance.now()
/** envd's CPU time (utime + stime of the sandbox's JVM, 10 ms ticks) and minor page faults, read inside the sandbox. */
async function envdCpu(sbx) {
  const { stdout } = await sbx.commands.run('cat /proc/$(pgrep -o -x java)/stat')
  const f = stdout.split(') ')[1].split(' ')
  return { ms: (Number(f[11]) + Number(f[12])) * 10, minflt: Number(f[7]) }
}

try {
  const first = await Sandbox.create('base', opts) // builds the template's boot image on a fresh data dir
  await first.kill()
  for (let i = 0; i < 3; i++) await (await Sandbox.create('base', opts)).kill()

  const tti = []
  const creates = []
  const commandsOnNew = Array.from({ length: splitCommands }, () => [])
  const envdCpuCold = []
  const envdCpuWarm = []
  const envdFaultsCold = []
  const envdFaultsWarm = []
  const threadsAtLoop = serverThreadCpu()
  const cpuAtLoop = serverCpuMs()
  for (let i = 0; i < (onlyExec ? 0 : n); i++) {
    await sleep(500) // lets the warm pool refill, as between users' creates
    const t0 = now()
    const sbx = await Sandbox.create('base', opts)
    const created = now()
    await sbx.commands.run('true')
    const t1 = now()
    tti.push(t1 - t0)
    creates.push(created - t0)
    if (splitCommands > 0) commandsOnNew[0].push(t1 - created)
    for (let k = 1; k < splitCommands; k++) {
      const c0 = now()
      await sbx.commands.run('true')
      commandsOnNew[k].push(now() - c0)
    }
    if (splitCommands > 0) {
      // envd's CPU time since its restore (load-insensitive), after create's /init and the k commands, then after k more
      const cold = await envdCpu(sbx)
      for (let k = 0; k < splitCommands; k++) await sbx.commands.run('true')
      const warm = await envdCpu(sbx)
      envdCpuCold.push(cold.ms)
      envdCpuWarm.push(warm.ms - cold.ms)
      envdFaultsCold.push(cold.minflt)
      envdFaultsWarm.push(warm.minflt - cold.minflt)
    }
    await sbx.kill()
  }
  if (!onlyExec) report('time to interactive (create + commands.run true)', tti)
  if (!onlyExec && n > 0) {
    // includes the pool's refill (a restore per create) and the split's commands when asked for
    console.log(`sequential loop: server JVM CPU per create ${((serverCpuMs() - cpuAtLoop) / n).toFixed(1)} ms; by thread ` +
      `(schedstat ms per create): ${threadLine(serverThreadCpu(threadsAtLoop), n)}`)
  }
  if (!onlyExec && splitCommands > 0) {
    report('  split: Sandbox.create', creates)
    commandsOnNew.forEach((samples, k) => report(`  split: command ${k + 1} on the new sandbox`, samples))
    report(`  envd CPU ms since restore: /init + ${splitCommands} commands + 1 read`, envdCpuCold)
    report(`  envd CPU ms: the next ${splitCommands} commands + 1 read`, envdCpuWarm)
    // since restore includes CRIU's own filling of the restored memory in the task
    report(`  envd minor faults since restore (+ CRIU's): /init + ${splitCommands} + 1`, envdFaultsCold, '')
    report(`  envd minor faults: the next ${splitCommands} commands + 1 read`, envdFaultsWarm, '')
  }

  // The 20-way burst, AENV_BENCH_BURSTS times (default 2: the row pools 40 samples, enough for a p95), each
  // after a settle in which the pool refills (a pool sized for the burst, AENV_BACKEND_POOL_SIZE=20, needs longer:
  // AENV_BENCH_BURST_SETTLE_MS=20000) and followed by the kills of its sandboxes.
  const bursts = onlyExec || onlyDisk ? 0 : Number(process.env.AENV_BENCH_BURSTS ?? 2)
  const burst = []
  const burstCreates = []
  const burstFirsts = []
  for (let b = 1; b <= bursts; b++) {
    await sleep(Number(process.env.AENV_BENCH_BURST_SETTLE_MS ?? 2000))
    const cpuAtBurst = burstCpu()
    const threadsAtBurst = serverThreadCpu()
    const startedMono = process.hrtime.bigint()
    const started = now()
    const each = []
    const many = await Promise.all(Array.from({ length: 20 }, async () => {
      const t0 = now()
      const sbx = await Sandbox.create('base', opts)
      const created = now()
      await sbx.commands.run('true')
      const t1 = now()
      each.push(t1 - t0)
      burstCreates.push(created - t0)
      burstFirsts.push(t1 - created)
      return sbx
    }))
    const all = now() - started
    // the burst's window in CLOCK_MONOTONIC seconds, e.g. for `perf record -k mono` + `perf script --time start,end`
    // (the last burst's when there are several)
    if (process.env.AENV_BENCH_BURST_WINDOW) {
      writeFileSync(process.env.AENV_BENCH_BURST_WINDOW, `${Number(startedMono) / 1e9},${Number(process.hrtime.bigint()) / 1e9}\n`)
    }
    const spent = burstCpu(cpuAtBurst)
    const sorted = [...each].sort((x, y) => x - y)
    console.log(`20-way burst ${b} of ${bursts}: p50 ${sorted[9].toFixed(1)} p95 ${sorted[18].toFixed(1)} ms, all interactive ` +
      `after ${all.toFixed(0)} ms; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
    console.log(`  CPU ms (load-insensitive): machine ${spent.machine} (both cores), server JVM ${spent.server}, ` +
      `server's reaped children (runc, CRIU, ...) ${spent.children}, this Node (SDK) ${spent.node}, sandboxes (cgroups) ` +
      `${spent.sandboxes}, rest (unreaped children, kernel work, other processes) ` +
      `${spent.machine - spent.server - spent.children - spent.node - spent.sandboxes}`)
    console.log(`  server JVM CPU by thread (schedstat ms): ${threadLine(serverThreadCpu(threadsAtBurst))}`)
    burst.push(...each)
    await Promise.all(many.map((s) => s.kill()))
  }
  if (bursts > 0) {
    report(`time to interactive, 20-way burst (each; ${bursts} burst${bursts === 1 ? '' : 's'})`, burst)
    if (splitCommands > 0) {
      report('  split: Sandbox.create (burst)', burstCreates)
      report('  split: first command (burst)', burstFirsts)
    }
  }
  if (onlyTti) console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)

  if (!onlyTti) {
    const sbx = await Sandbox.create('base', { ...opts, timeoutMs: 3_600_000 })
    const execRuns = onlyDisk ? 0 : Math.max(n, 100)
    const firstAt = now()
    if (!onlyDisk) await sbx.commands.run('true')
    const firstExecMs = now() - firstAt
    const warmupCpu0 = serverCpuMs()
    for (let i = 1; i < (onlyDisk ? 0 : execWarmup); i++) await sbx.commands.run('true')
    const warmupCpu = serverCpuMs() - warmupCpu0
    const exec = []
    const cpu0 = serverCpuMs()
    for (let i = 0; i < execRuns; i++) {
      const t0 = now()
      await sbx.commands.run('true')
      exec.push(now() - t0)
    }
    if (!onlyDisk) {
      const execCpu = (serverCpuMs() - cpu0) / exec.length
      report('commands.run true on a running sandbox', exec)
      console.log(`server: ready ${serverReadyMs.toFixed(0)} ms after spawn; first command on this sandbox ${firstExecMs.toFixed(1)} ms; ` +
        `server CPU per command ${(warmupCpu / Math.max(1, execWarmup - 1)).toFixed(2)} ms in the ${execWarmup} warm-up commands, ` +
        `${execCpu.toFixed(2)} ms in the measured ones; server CPU since spawn ${serverCpuMs()} ms`)
    }
    console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)

    if (!onlyExec) {
      await sbx.commands.run('sleep 100000', { background: true })
      const pause = []
      const resume = []
      for (let i = 0; i < (onlyDisk ? 0 : n); i++) {
        let t0 = now()
        await sbx.pause()
        pause.push(now() - t0)
        t0 = now()
        await sbx.connect()
        await sbx.commands.run('true')
        resume.push(now() - t0)
      }
      if (!onlyDisk) {
        report('pause', pause)
        report('resume (connect of a paused sandbox + commands.run true)', resume)
      }

      const snapshot = []
      const fork1 = []
      const fork10 = []
      for (let i = 0; i < Math.max(5, Math.floor(n / 3)); i++) {
        let t0 = now()
        await sbx.createSnapshot()
        snapshot.push(now() - t0)
        t0 = now()
        const [child] = await sbx.fork({ count: 1 })
        await child.commands.run('true')
        fork1.push(now() - t0)
        await child.kill()
        if (i < 5) {
          t0 = now()
          const children = await sbx.fork({ count: 10 })
          fork10.push(now() - t0)
          await Promise.all(children.map((c) => (c instanceof Error ? null : c.kill())))
        }
      }
      report('snapshot (createSnapshot)', snapshot)
      report('fork x1 (fork + commands.run true in the child; capture included)', fork1)
      report('fork x10 (until all 10 children are returned; capture included)', fork10)
    }
    await sbx.kill()
  }
} finally {
  // the server's log (per-step timings, e.g. "container sandbox started ... new_disk= rootfs_ms=") when asked for
  if (process.env.AENV_BENCH_SERVER_LOG) writeFileSync(process.env.AENV_BENCH_SERVER_LOG, server.output())
  await server.stop({ timeoutMs: 120_000 })
}
