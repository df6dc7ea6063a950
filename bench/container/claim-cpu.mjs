// What a claimed sandbox spends on Sandbox.create + commands.run('true'), read on the host (load-insensitive): the
// claimed envd's CPU per thread (schedstat, summed by thread name with digits dropped: "C1 CompilerThre",
// "ForkJoinPool-#-worker-#", ...), its minor page faults, and the sandbox cgroup's cpuacct (envd + bash; setpriv only
// for stdin and pty commands).
// Pool members that were not claimed spend ~nothing meanwhile; a claimed member is one whose envd is the child of the
// sandbox's init and whose cgroup grew by more than AENV_BENCH_CLAIM_MIN_US (default 2000 us).
//   mvn -B -q -DskipTests package && node bench/container/claim-cpu.mjs [claims] [burst]
// Without `burst`: `claims` single claims one after another (default 10), each after the pool is full again (pool 4).
// With `burst`: `claims` rounds (default 3) of a 20-way burst against a pool of 20 (as docs/benchmarks.md's burst row).
// AENV_BENCH_SERVER_LOG=<file> keeps the server's log there.
// Claims a benchmark lane (bench/lib/lane.mjs, the sdk layout). AENV_BACKEND_ENVD_DIR points at another envd build.
import { readFileSync, writeFileSync, readdirSync, statSync, openSync, readSync, closeSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { spawn, execFileSync } from 'node:child_process'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startBenchServer } from '../lib/container-server.mjs'
import { claimLane, LAYOUTS } from '../lib/lane.mjs'
import { threadCpuMs } from '../lib/proc.mjs'

const burstMode = process.argv[3] === 'burst'
if (process.argv[3] !== undefined && !burstMode) throw new Error(`unknown mode ${process.argv[3]} (burst)`)
const rounds = Number(process.argv[2] ?? (burstMode ? 3 : 10))
const burstSize = 20
const poolSize = burstMode ? burstSize : 4
// AENV_BENCH_SHOW_ENVD_LOG=1: prints what the first claimed envd wrote to its log (stdout) during the first single
// claim's create, its first command and its second (with -Xlog options in an envd dir's jvm.options: what ran cold)
const showLog = process.env.AENV_BENCH_SHOW_ENVD_LOG === '1'
// AENV_BENCH_NEXT_COMMAND: what the single claims' next three commands run (default `true`), e.g. a curl of envd's
// /health over a new connection, to price what the first command pays
const nextCommand = process.env.AENV_BENCH_NEXT_COMMAND ?? 'true'
const minClaimUs = Number(process.env.AENV_BENCH_CLAIM_MIN_US ?? 2000)
delete process.env.E2B_DEBUG
const lane = await claimLane()
const cgroupParent = `agentenv-bench-sdk-${lane}`
const server = await startBenchServer(lane, LAYOUTS.sdk, { poolSize })
const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 }

/** The cpuacct cgroup path of a pid, or null when it is not one of this lane's sandboxes. */
function cpuacctOf(pid) {
  for (const line of readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')) {
    const [, controllers, path] = line.split(':')
    if (controllers?.split(',').includes('cpuacct') && path.includes(`/${cgroupParent}/`)) return path
  }
  return null
}

/** Every envd of this lane: pid -> { cgroup, threads (ms by name), minflt, majflt, cgroupUs }. */
function envds() {
  const found = new Map()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'java') continue
      const cgroup = cpuacctOf(entry)
      if (cgroup === null) continue
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const threads = threadCpuMs(entry, (tid, name) => name.replace(/\d+/g, '#'))
      const cgroupUs = Number(readFileSync(`/sys/fs/cgroup/cpuacct${cgroup}/cpuacct.usage`, 'utf8')) / 1000
      const logBytes = showLog ? statSync(`/proc/${entry}/fd/1`).size : 0
      found.set(entry, { cgroup, threads, minflt: Number(f[7]), majflt: Number(f[9]), cgroupUs, logBytes })
    } catch { /* ended meanwhile, or not ours */ }
  }
  return found
}

function printLog(pid, from, to, what) {
  const fd = openSync(`/proc/${pid}/fd/1`, 'r')
  const bytes = Buffer.alloc(to - from)
  readSync(fd, bytes, 0, bytes.length, from)
  closeSync(fd)
  console.log(`--- envd log during ${what} (${bytes.length} bytes)\n${bytes.toString('utf8')}--- end`)
}

/** What the claimed envds spent between two envds() readings, summed: threads, faults, cgroup. */
function claimed(before, after, only) {
  const sum = { pids: [], claims: 0, threads: {}, minflt: 0, majflt: 0, cgroupMs: 0, envdMs: 0 }
  for (const [pid, b] of before) {
    const a = after.get(pid)
    if (a === undefined || (only ? !only.includes(pid) : a.cgroupUs - b.cgroupUs < minClaimUs)) continue
    sum.claims++
    sum.pids.push(pid)
    sum.minflt += a.minflt - b.minflt
    sum.majflt += a.majflt - b.majflt
    sum.cgroupMs += (a.cgroupUs - b.cgroupUs) / 1000
    for (const [name, ms] of Object.entries(a.threads)) {
      const d = ms - (b.threads[name] ?? 0)
      sum.threads[name] = (sum.threads[name] ?? 0) + d
      sum.envdMs += d
    }
  }
  return sum
}

async function poolFull(live) {
  const deadline = Date.now() + 120_000
  while (envds().size < poolSize + live) {
    if (Date.now() > deadline) throw new Error(`the pool did not fill to ${poolSize}`)
    await sleep(200)
  }
  await sleep(burstMode ? 3000 : 1000) // the last member's own /init and GC settled
}

const totals = { claims: 0, threads: {}, minflt: 0, majflt: 0, cgroupMs: 0, envdMs: 0 }
const perClaim = []
const createOnly = { threads: {}, cgroupMs: 0, envdMs: 0 }
const nextCommands = Array.from({ length: 3 }, () => ({ threads: {}, cgroupMs: 0, envdMs: 0 }))
try {
  for (let i = 0; i < 4; i++) await (await Sandbox.create('base', opts)).kill() // template build, server warm-up
  for (let r = 0; r < rounds; r++) {
    await poolFull(0)
    const before = envds()
    let perf = null
    if (process.env.AENV_BENCH_PERF && r === rounds - 1) { // scratch: perf record of every envd during the last round
      perf = spawn('perf', ['record', '-q', '-F', '20000', '-g', '-o', process.env.AENV_BENCH_PERF, '-p', [...before.keys()].join(',')], { stdio: 'inherit' })
      await sleep(1500)
    }
    const count = burstMode ? burstSize : 1
    let afterCreate
    const sandboxes = await Promise.all(Array.from({ length: count }, async () => {
      const sbx = await Sandbox.create('base', opts)
      if (!burstMode) afterCreate = envds()
      await sbx.commands.run('true')
      return sbx
    }))
    const afterClaim = envds()
    if (perf) {
      perf.kill('SIGINT')
      await new Promise((resolve) => perf.once('exit', resolve))
      for (const pid of before.keys()) { // JIT symbols: the JVM's perf map, from its /tmp to the host's under the host pid
        try {
          execFileSync('/usr/lib/jvm/temurin-25-jdk-amd64/bin/jcmd', [pid, 'Compiler.perfmap'], { stdio: 'ignore', timeout: 20000 })
          const nspid = readFileSync(`/proc/${pid}/status`, 'utf8').match(/NSpid:\s+\d+\s+(\d+)/)[1]
          execFileSync('cp', [`/proc/${pid}/root/tmp/perf-${nspid}.map`, `/tmp/perf-${pid}.map`])
        } catch (e) { console.error(`no perf map of ${pid}: ${e.message}`) }
      }
    }
    const spent = claimed(before, afterClaim)
    if (!burstMode) {
      const init = claimed(before, afterCreate, spent.pids)
      createOnly.cgroupMs += init.cgroupMs
      createOnly.envdMs += init.envdMs
      for (const [name, ms] of Object.entries(init.threads)) createOnly.threads[name] = (createOnly.threads[name] ?? 0) + ms
    }
    if (!burstMode) { // the next commands on the same sandbox, each alone: what the claim pays beyond them
      let previous = afterClaim
      for (let k = 0; k < nextCommands.length; k++) {
        await sandboxes[0].commands.run(nextCommand)
        const now = envds()
        const next = claimed(previous, now, spent.pids)
        nextCommands[k].cgroupMs += next.cgroupMs
        nextCommands[k].envdMs += next.envdMs
        for (const [name, ms] of Object.entries(next.threads)) nextCommands[k].threads[name] = (nextCommands[k].threads[name] ?? 0) + ms
        if (showLog && r === 0) {
          const pid = spent.pids[0]
          if (k === 0) {
            printLog(pid, before.get(pid).logBytes, afterCreate.get(pid).logBytes, 'Sandbox.create')
            printLog(pid, afterCreate.get(pid).logBytes, afterClaim.get(pid).logBytes, 'the first command')
          }
          printLog(pid, previous.get(pid).logBytes, now.get(pid).logBytes, `command ${k + 2}`)
        }
        previous = now
      }
    }
    await Promise.all(sandboxes.map((s) => s.kill()))
    if (spent.claims !== count) console.error(`round ${r}: ${spent.claims} claimed envds found, expected ${count}`)
    totals.claims += spent.claims
    totals.minflt += spent.minflt
    totals.majflt += spent.majflt
    totals.cgroupMs += spent.cgroupMs
    totals.envdMs += spent.envdMs
    for (const [name, ms] of Object.entries(spent.threads)) totals.threads[name] = (totals.threads[name] ?? 0) + ms
    perClaim.push(spent.cgroupMs / Math.max(1, spent.claims))
  }
  const per = (v) => (v / Math.max(1, totals.claims)).toFixed(2)
  console.log(`${burstMode ? `${rounds} bursts of ${burstSize}` : `${rounds} single claims`}: ${totals.claims} claimed sandboxes`)
  console.log(`per claim (create + commands.run true): sandbox cgroup ${per(totals.cgroupMs)} ms CPU ` +
    `(rounds: ${perClaim.map((v) => v.toFixed(1)).join(' ')}), envd ${per(totals.envdMs)} ms, ` +
    `minor faults ${per(totals.minflt)}, major faults ${per(totals.majflt)}`)
  console.log('envd CPU per claim by thread (ms):')
  for (const [name, ms] of Object.entries(totals.threads).sort((a, b) => b[1] - a[1])) {
    if (ms / totals.claims >= 0.01) console.log(`  ${name.padEnd(28)} ${per(ms).padStart(7)}`)
  }
  if (!burstMode) {
    const topOf = (c) => Object.entries(c.threads).sort((a, b) => b[1] - a[1]).slice(0, 4)
      .map(([name, ms]) => `${name} ${(ms / rounds).toFixed(2)}`).join(', ')
    console.log(`of which Sandbox.create alone (the claim's /init): cgroup ${(createOnly.cgroupMs / rounds).toFixed(2)} ms, ` +
      `envd ${(createOnly.envdMs / rounds).toFixed(2)} ms (${topOf(createOnly)})`)
    nextCommands.forEach((c, k) => {
      const top = Object.entries(c.threads).sort((a, b) => b[1] - a[1]).slice(0, 4)
        .map(([name, ms]) => `${name} ${(ms / rounds).toFixed(2)}`).join(', ')
      console.log(`command ${k + 2} on the claimed sandbox: cgroup ${(c.cgroupMs / rounds).toFixed(2)} ms, envd ` +
        `${(c.envdMs / rounds).toFixed(2)} ms (${top})`)
    })
  }
  console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
} finally {
  if (process.env.AENV_BENCH_SERVER_LOG) writeFileSync(process.env.AENV_BENCH_SERVER_LOG, server.output())
  await server.stop({ timeoutMs: 120_000 })
}
