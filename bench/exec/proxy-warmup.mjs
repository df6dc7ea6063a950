// The sandbox proxy's cost as the server's JIT warms up: 4 × 2,000 sequential `process.Process/List` calls through
// the proxy to a real container sandbox's envd (one keep-alive connection), with the server's CPU time per request
// (from /proc). Shows why a fresh server's proxied requests cost more than a long-running one's. Needs root, host
// setup and the built jars (see bench/exec/exec.mjs).
//   node bench/exec/proxy-warmup.mjs            (server with serve.sh's JVM options)
//   BENCH_SERVER_JVM=test node bench/exec/proxy-warmup.mjs   (the e2e harness's C1-only options)
import { request, Agent } from 'node:http'
import { join } from 'node:path'
import { readFileSync } from 'node:fs'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startServer, repoRoot, SERVE_JVM_OPTIONS } from '../../e2e/lib/control-plane-harness.mjs'
import { claimLane, laneEnv, LAYOUTS } from '../lib/lane.mjs'

const names = laneEnv(await claimLane(), LAYOUTS.exec) // concurrent bench runs never share names
const server = await startServer({
  backend: 'container',
  readyTimeoutMs: 120_000,
  jvmOptions: process.env.BENCH_SERVER_JVM === 'test' ? undefined : SERVE_JVM_OPTIONS,
  env: {
    ...names,
    AENV_BACKEND_MAX_SANDBOXES: '4',
    AENV_BACKEND_CPU_COUNT: '1',
    AENV_BACKEND_MEMORY_MB: '512',
    AENV_BACKEND_POOL_SIZE: '0',
    AENV_BACKEND_ENVD_DIR: process.env.AENV_BACKEND_ENVD_DIR ?? join(repoRoot, 'agentenv-envd', 'target'),
  },
})
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}
try {
  const sbx = await Sandbox.create('base', { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, timeoutMs: 600_000 })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const headers = {
    'content-type': 'application/json', 'connect-protocol-version': '1', 'X-Access-Token': sbx.envdAccessToken,
    Authorization: 'Basic ' + Buffer.from('user:').toString('base64'),
    'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983',
  }
  const call = () => new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = request({ host: '127.0.0.1', port: server.port, agent, method: 'POST', path: '/process.Process/List', headers }, (res) => {
      res.on('data', () => {})
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`${res.statusCode}`))))
    })
    req.on('error', reject)
    req.end('{}')
  })
  for (let phase = 1; phase <= 4; phase++) {
    const c0 = cpuMs(server.pid)
    const t = []
    for (let i = 0; i < 2000; i++) t.push(await call())
    t.sort((a, b) => a - b)
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
    console.log(`requests ${(phase - 1) * 2000 + 1}-${phase * 2000}: proxied List p50 ${t[1000].toFixed(2)} ms, p95 ${t[1900].toFixed(2)} ms, server CPU ${((cpuMs(server.pid) - c0) / 2000).toFixed(2)} ms/request, load ${load}`)
  }
  agent.destroy()
  await sbx.kill()
} finally {
  await server.stop({ timeoutMs: 120_000 })
}
