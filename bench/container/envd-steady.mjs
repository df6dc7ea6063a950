// envd's CPU per steady commands.run('true') on a long-running sandbox, by thread: 100 commands first, then [n]
// (default 300) measured, read on the host (schedstat of the claimed envd's threads, the sandbox cgroup's cpuacct).
//   mvn -B -q -DskipTests package && node bench/container/envd-steady.mjs [n]
// PERF_OUT=<file>: records envd with `perf record -g` meanwhile and copies its JIT perf map to /tmp/perf-<pid>.map
// (read with `perf script -i <file> -F comm,tid,ip,sym,dso`); CODELIST=<dir>: `jcmd Compiler.codelist` before and after
// the measured commands to <dir>/code{0,1}.txt. AENV_BACKEND_ENVD_DIR picks another envd build (A/B).
// Claims a benchmark lane (bench/lib/lane.mjs, the sdk layout).
import { readFileSync } from 'node:fs'
import { spawn, execFileSync } from 'node:child_process'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startBenchServer } from '../lib/container-server.mjs'
import { claimLane, LAYOUTS } from '../lib/lane.mjs'
import { cpuacctUsageFile, envdOfSandbox, threadCpuMs } from '../lib/proc.mjs'
const n = Number(process.argv[2] ?? 300)
delete process.env.E2B_DEBUG
const lane = await claimLane()
const cgroupParent = `agentenv-bench-sdk-${lane}`
const server = await startBenchServer(lane, LAYOUTS.sdk, { poolSize: 1 })
const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 }
try {
  const sbx = await Sandbox.create('base', opts)
  for (let i = 0; i < 100; i++) await sbx.commands.run('true')
  const envd = envdOfSandbox(sbx.sandboxId, cgroupParent)
  const cgPath = cpuacctUsageFile(envd)
  if (process.env.CODELIST) execFileSync('sh', ['-c', `/usr/lib/jvm/temurin-25-jdk-amd64/bin/jcmd ${envd} Compiler.codelist > ${process.env.CODELIST}/code0.txt`])
  const t0 = threadCpuMs(envd, (tid, name) => name.replace(/\d+/g, '#'))
  const c0 = Number(readFileSync(cgPath, 'utf8'))
  const perf = process.env.PERF_OUT ? spawn('perf', ['record', '-q', '-F', '10000', '-g', '-o', process.env.PERF_OUT, '-p', envd], { stdio: 'inherit' }) : null
  if (perf) await new Promise((r) => setTimeout(r, 500))
  const w0 = performance.now()
  for (let i = 0; i < n; i++) await sbx.commands.run('true')
  const wall = performance.now() - w0
  if (perf) { perf.kill('SIGINT'); await new Promise((r) => perf.once('exit', r)) }
  if (process.env.CODELIST) execFileSync('sh', ['-c', `/usr/lib/jvm/temurin-25-jdk-amd64/bin/jcmd ${envd} Compiler.codelist > ${process.env.CODELIST}/code1.txt`])
  const t1 = threadCpuMs(envd, (tid, name) => name.replace(/\d+/g, '#'))
  const c1 = Number(readFileSync(cgPath, 'utf8'))
  const per = Object.entries(t1).map(([k, v]) => [k, (v - (t0[k] ?? 0)) / n]).filter(([, v]) => v > 0.005).sort((a, b) => b[1] - a[1])
  console.log(`envd ${envd}; per command: cgroup ${((c1 - c0) / 1e6 / n).toFixed(2)} ms, envd threads ${per.reduce((s, [, v]) => s + v, 0).toFixed(2)} ms, wall ${(wall / n).toFixed(2)} ms`)
  console.log(per.map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', '))
  if (perf) {
    execFileSync('/usr/lib/jvm/temurin-25-jdk-amd64/bin/jcmd', [envd, 'Compiler.perfmap'], { stdio: 'ignore', timeout: 20000 })
    const nspid = readFileSync(`/proc/${envd}/status`, 'utf8').match(/NSpid:.*\s(\d+)\s*$/m)[1]
    execFileSync('cp', [`/proc/${envd}/root/tmp/perf-${nspid}.map`, `/tmp/perf-${envd}.map`])
  }
  await sbx.kill()
} finally {
  await server.stop()
}
