// Gateway overhead: the latency of an envd round trip through a node's own proxy vs through a cluster gateway in
// front of it (gateway -> node -> envd). envd is the real envd jar on this host; the node runs the mock backend,
// whose sandboxes report that envd as their guest endpoint, and keeps its records in a private PostgreSQL; the
// gateway reads the sandbox's owner there. Requests are sequential on one keep-alive connection each (header routing,
// as the E2B SDK does with E2B_SANDBOX_URL), node and gateway interleaved.
//
//   node bench/cluster/gateway.mjs [--requests N]        (as root: PostgreSQL runs as the postgres user)
//
// Needs the built jars: mvn -B -pl agentenv-server,agentenv-backend-mock,agentenv-envd -am package -DskipTests
import { Agent } from 'node:http'
import os from 'node:os'
import { startServer, freePort } from '../../e2e/lib/control-plane-harness.mjs'
import { startEnvd } from '../../e2e/lib/envd-harness.mjs'
import { startPostgres } from '../../e2e/lib/postgres-harness.mjs'
import { interleaved } from '../lib/roundtrip.mjs'

const args = process.argv.slice(2)
const i = args.indexOf('--requests')
const N = i >= 0 && Number(args[i + 1]) > 0 ? Number(args[i + 1]) : 3000
const WARMUP = 1000

const envd = await startEnvd({ port: await freePort() })
const pg = await startPostgres()
const cluster = { AENV_CLUSTER_DATABASE_URL: pg.jdbcUrl, AENV_CLUSTER_DATABASE_USER: pg.user }
const results = []
let node
let gateway
try {
  const nodePort = await freePort()
  node = await startServer({
    backend: 'mock',
    port: nodePort,
    env: {
      ...cluster,
      AENV_BACKEND_GUEST_ENDPOINT: `127.0.0.1:${envd.port}`,
      AENV_NODE_ID: 'n1',
      AENV_NODE_ADDRESS: `http://127.0.0.1:${nodePort}`,
    },
  })
  gateway = await startServer({ backend: 'mock', args: ['gateway'], env: cluster })
  const res = await fetch(`${gateway.url}/v2/sandboxes`, {
    method: 'POST', headers: { 'X-API-Key': gateway.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ templateID: 'base', timeout: 3600 }),
  })
  if (res.status !== 201) throw new Error(`create through the gateway: ${res.status} ${await res.text()}`)
  const sandbox = await res.json()
  const via = (port) => ({ host: '127.0.0.1', port, agent: new Agent({ keepAlive: true, maxSockets: 1 }) })
  const direct = via(node.port)
  const gated = via(gateway.port)
  const route = { 'E2b-Sandbox-Id': sandbox.sandboxID, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': sandbox.envdAccessToken }
  const rpc = { 'content-type': 'application/json', 'connect-protocol-version': '1' }
  const rounds = { n: N, warmup: WARMUP }
  results.push(...await interleaved('GET /health',
    { node: { target: direct, headers: route }, gateway: { target: gated, headers: route } },
    'GET', '/health', undefined, rounds))
  const rpcHeaders = { ...rpc, ...route }
  results.push(...await interleaved('process.Process/List',
    { node: { target: direct, headers: rpcHeaders }, gateway: { target: gated, headers: rpcHeaders } },
    'POST', '/process.Process/List', '{}', rounds))
  direct.agent.destroy()
  gated.agent.destroy()
} finally {
  if (gateway) await gateway.stop()
  if (node) await node.stop()
  await pg.stop()
  await envd.stop()
}

console.log(`machine: ${os.cpus().length} x ${os.cpus()[0].model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
  `node ${process.version}; ${N} requests each after ${WARMUP} warm-up; ${new Date().toISOString()}`)
console.log('| envd request | path | p50 ms | p90 ms | p99 ms | p50 added by the gateway |')
console.log('|---|---|---|---|---|---|')
for (let r = 0; r < results.length; r += 2) {
  const [d, g] = [results[r], results[r + 1]]
  for (const row of [d, g]) {
    const added = row.kind === 'gateway' ? `${(g.p50 - d.p50).toFixed(3)} ms` : ''
    console.log(`| ${row.label} | ${row.kind} | ${row.p50.toFixed(3)} | ${row.p90.toFixed(3)} | ${row.p99.toFixed(3)} | ${added} |`)
  }
}
