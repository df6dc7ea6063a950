// Sandbox proxy overhead: the latency of an envd round trip made directly vs through the server's proxy (header
// routing, as the E2B SDK does with E2B_SANDBOX_URL = the server). envd is the real envd jar on this host; the server
// runs the mock backend, whose sandboxes report that envd as their guest endpoint, over TCP and (second run) over
// envd's unix socket. Requests are sequential on one keep-alive connection each, direct and proxied interleaved.
//
//   node bench/proxy/roundtrip.mjs [--requests N]
//
// Needs the built jars: mvn -B -pl agentenv-server,agentenv-backend-mock,agentenv-envd -am package -DskipTests
import { Agent } from 'node:http'
import os from 'node:os'
import { startServer, freePort } from '../../e2e/lib/control-plane-harness.mjs'
import { startEnvd } from '../../e2e/lib/envd-harness.mjs'
import { interleaved } from '../lib/roundtrip.mjs'

const args = process.argv.slice(2)
const i = args.indexOf('--requests')
const N = i >= 0 && Number(args[i + 1]) > 0 ? Number(args[i + 1]) : 3000
const WARMUP = 1000

const envd = await startEnvd({ port: await freePort() })
const results = []
try {
  for (const transport of ['tcp', 'unix']) {
    const env = { AENV_BACKEND_GUEST_ENDPOINT: `127.0.0.1:${envd.port}` }
    if (transport === 'unix') env.AENV_BACKEND_GUEST_UNIX_SOCKET = envd.socketPath
    const server = await startServer({ backend: 'mock', env })
    try {
      const res = await fetch(`${server.url}/v2/sandboxes`, {
        method: 'POST', headers: { 'X-API-Key': server.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ templateID: 'base', timeout: 3600 }),
      })
      const sandbox = await res.json()
      const proxied = { host: '127.0.0.1', port: server.port, agent: new Agent({ keepAlive: true, maxSockets: 1 }) }
      const direct = transport === 'unix'
        ? { socketPath: envd.socketPath, agent: new Agent({ keepAlive: true, maxSockets: 1 }) }
        : { host: '127.0.0.1', port: envd.port, agent: new Agent({ keepAlive: true, maxSockets: 1 }) }
      const route = { 'E2b-Sandbox-Id': sandbox.sandboxID, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': sandbox.envdAccessToken }
      const rpc = { 'content-type': 'application/json', 'connect-protocol-version': '1' }
      const rounds = { n: N, warmup: WARMUP }
      results.push(...await interleaved(`GET /health (${transport})`,
        { direct: { target: direct, headers: {} }, proxied: { target: proxied, headers: route } },
        'GET', '/health', undefined, rounds))
      results.push(...await interleaved(`process.Process/List (${transport})`,
        { direct: { target: direct, headers: rpc }, proxied: { target: proxied, headers: { ...rpc, ...route } } },
        'POST', '/process.Process/List', '{}', rounds))
      proxied.agent.destroy()
      direct.agent.destroy()
    } finally {
      await server.stop()
    }
  }
} finally {
  await envd.stop()
}

console.log(`machine: ${os.cpus().length} x ${os.cpus()[0].model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
  `node ${process.version}; ${N} requests each after ${WARMUP} warm-up; ${new Date().toISOString()}`)
console.log('| request (guest transport) | path | p50 ms | p90 ms | p99 ms | p50 added by the proxy |')
console.log('|---|---|---|---|---|---|')
for (let r = 0; r < results.length; r += 2) {
  const [d, p] = [results[r], results[r + 1]]
  for (const row of [d, p]) {
    const added = row.kind === 'proxied' ? `${(p.p50 - d.p50).toFixed(3)} ms` : ''
    console.log(`| ${row.label} | ${row.kind} | ${row.p50.toFixed(3)} | ${row.p90.toFixed(3)} | ${row.p99.toFixed(3)} | ${added} |`)
  }
}
