// envd's CPU per commands.run('true') in windows after a claim (commands 1, 2, 3, 4-5, 6-10, ..., 201-400), read on
// the host (load-insensitive): the claimed envd's threads (schedstat) and the sandbox cgroup's cpuacct (envd + bash).
// A claimed sandbox is a restore of the template's checkpoint, so what is still interpreted or compiled at its first
// commands shows as more CPU in the early windows than in the last.
//   mvn -B -q -DskipTests package && node bench/container/envd-cold.mjs [claims]
// claims: sandboxes claimed one after another (default 5), each 3 s after the previous one was killed.
// AENV_BENCH_CODELIST=<dir>: also writes the claimed envd's `jcmd Compiler.codelist` after its first command and after
// the last window to <dir>/code-<claim>-{first,last}.txt and prints how many methods were compiled in between (the
// attach costs envd CPU: the windows of such a run do not count).
// AENV_BACKEND_ENVD_DIR picks another envd build (A/B). Claims a benchmark lane (bench/lib/lane.mjs, the sdk layout).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { execFileSync } from 'node:child_process'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startBenchServer } from '../lib/container-server.mjs'
import { claimLane, LAYOUTS } from '../lib/lane.mjs'
import { cpuacctUsageFile, envdOfSandbox, threadCpuMs } from '../lib/proc.mjs'

const JCMD = '/usr/lib/jvm/temurin-25-jdk-amd64/bin/jcmd'
const claims = Number(process.argv[2] ?? 5)
const codelistDir = process.env.AENV_BENCH_CODELIST
delete process.env.E2B_DEBUG
const lane = await claimLane()
const cgroupParent = `agentenv-bench-sdk-${lane}`
const server = await startBenchServer(lane, LAYOUTS.sdk, { poolSize: 2 })
const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 }
const windows = [1, 1, 1, 2, 5, 10, 30, 50, 100, 200]
const cgroupSums = windows.map(() => 0)
const envdSums = windows.map(() => 0)
const compiledBetween = []

function codelist(pid, file) {
  const text = execFileSync(JCMD, [pid, 'Compiler.codelist'], { timeout: 30_000 }).toString()
  writeFileSync(file, text)
  // "<id> <level> <state> <method> [<addresses>] ...": the method names of the alive nmethods
  return new Set(text.split('\n').map((l) => l.split(' ')).filter((f) => f.length > 3 && f[2] === '0').map((f) => f[3]))
}

try {
  const t0 = performance.now()
  await (await Sandbox.create('base', opts)).kill() // the template's image (built when envd's build changed)
  const firstCreateMs = performance.now() - t0
  for (let i = 0; i < 2; i++) await (await Sandbox.create('base', opts)).kill() // server warm-up
  if (codelistDir) mkdirSync(codelistDir, { recursive: true })
  for (let c = 0; c < claims; c++) {
    await sleep(3000)
    const sbx = await Sandbox.create('base', opts)
    const envd = envdOfSandbox(sbx.sandboxId, cgroupParent)
    const cgroupUsage = cpuacctUsageFile(envd)
    const envdMs = () => Object.values(threadCpuMs(envd)).reduce((a, b) => a + b, 0)
    let first = null
    for (let w = 0; w < windows.length; w++) {
      const c0 = Number(readFileSync(cgroupUsage, 'utf8'))
      const e0 = envdMs()
      for (let k = 0; k < windows[w]; k++) await sbx.commands.run('true')
      cgroupSums[w] += (Number(readFileSync(cgroupUsage, 'utf8')) - c0) / 1e6 / windows[w]
      envdSums[w] += (envdMs() - e0) / windows[w]
      if (codelistDir && w === 0) first = codelist(envd, join(codelistDir, `code-${c}-first.txt`))
    }
    if (codelistDir) {
      const last = codelist(envd, join(codelistDir, `code-${c}-last.txt`))
      compiledBetween.push([...last].filter((m) => !first.has(m)))
    }
    await sbx.kill()
  }
  let at = 0
  console.log(`${claims} claims; envd and sandbox cgroup CPU per command (ms) by window after the claim` +
    (codelistDir ? ' (with codelist attaches: not comparable)' : ''))
  for (let w = 0; w < windows.length; w++) {
    console.log(`commands ${String(at + 1).padStart(3)}-${String(at + windows[w]).padEnd(3)}: envd ` +
      `${(envdSums[w] / claims).toFixed(2)}, cgroup ${(cgroupSums[w] / claims).toFixed(2)}`)
    at += windows[w]
  }
  if (codelistDir) {
    console.log(`methods compiled between the first command and command ${at}: ` +
      compiledBetween.map((m) => m.length).join(', '))
    console.log(compiledBetween.at(-1).slice(0, 60).join('\n'))
  }
  console.log(`first create (with the template's image build when envd changed): ${firstCreateMs.toFixed(0)} ms`)
  console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
} finally {
  await server.stop({ timeoutMs: 120_000 })
}
