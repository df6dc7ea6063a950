// The unmodified npm `e2b` SDK through a cluster gateway: two nodes (the server jar on the mock backend, whose every
// running sandbox reports one local envd process as its guest) keep their records in a private PostgreSQL, and a
// gateway in front of them is the SDK's E2B_API_URL and E2B_SANDBOX_URL: creates are placed on a node, every control-
// plane request and every envd byte reaches the node that owns the sandbox, lists span both nodes, and draining a
// node moves the next creates to the other. Needs root (PostgreSQL runs as the postgres user); skipped otherwise
// (failed when AENV_REQUIRE_HOST_TESTS=1).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Sandbox } from 'e2b'
import { startServer, freePort } from '../lib/control-plane-harness.mjs'
import { startEnvd, ensureTestUser } from '../lib/envd-harness.mjs'
import { startPostgres } from '../lib/postgres-harness.mjs'

const DOMAIN = 'sandbox.test'
const root = typeof process.getuid === 'function' && process.getuid() === 0
const missing = root ? undefined : 'needs root (PostgreSQL runs as the postgres user)'
if (missing && process.env.AENV_REQUIRE_HOST_TESTS === '1') throw new Error(`the cluster suite is required but ${missing}`)
const step = (name, fn) => test(name, { skip: missing ? `cluster test skipped: ${missing}` : false, timeout: 120_000 }, fn)

let envd
let pg
const nodes = []
let gateway
let opts

before(async () => {
  if (missing) return
  delete process.env.E2B_DEBUG // any value turns on the SDK's debug mode
  const user = ensureTestUser()
  envd = await startEnvd({ port: await freePort(), args: user ? ['--default-user', user] : [] })
  pg = await startPostgres()
  const cluster = { AENV_CLUSTER_DATABASE_URL: pg.jdbcUrl, AENV_CLUSTER_DATABASE_USER: pg.user }
  for (const id of ['n1', 'n2']) {
    const port = await freePort()
    nodes.push(await startServer({
      backend: 'mock',
      port,
      env: {
        ...cluster,
        AENV_BACKEND_GUEST_ENDPOINT: `127.0.0.1:${envd.port}`,
        AENV_SANDBOX_DOMAIN: DOMAIN,
        AENV_NODE_ID: id,
        AENV_NODE_ADDRESS: `http://127.0.0.1:${port}`,
      },
    }))
  }
  gateway = await startServer({ backend: 'mock', args: ['gateway'], env: { ...cluster, AENV_SANDBOX_DOMAIN: DOMAIN } })
  opts = { apiUrl: gateway.url, sandboxUrl: gateway.url, apiKey: gateway.apiKey, requestTimeoutMs: 30_000 }
})

after(async () => {
  try {
    if (gateway) await gateway.stop()
    for (const node of nodes) await node.stop()
  } finally {
    if (pg) await pg.stop()
    if (envd) await envd.stop()
  }
})

async function nodeStatus(id, status) {
  const res = await fetch(`${gateway.url}/nodes/${id}`, {
    method: 'POST',
    headers: { 'X-API-Key': gateway.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ status }),
  })
  assert.equal(res.status, 204, await res.text())
}

step('the SDK through a gateway: create, command, file write and read, list, kill', async () => {
  const sbx = await Sandbox.create('base', { ...opts, metadata: { suite: 'cluster' } })
  try {
    const run = await sbx.commands.run('echo "through the gateway"')
    assert.equal(run.exitCode, 0)
    assert.equal(run.stdout.trim(), 'through the gateway')
    const path = `/tmp/cluster-gateway-${sbx.sandboxId}.txt`
    await sbx.files.write(path, 'kept on its node')
    assert.equal(await sbx.files.read(path), 'kept on its node')
    await sbx.files.remove(path)
    const info = await sbx.getInfo()
    assert.equal(info.sandboxId, sbx.sandboxId)
    assert.equal(info.metadata.suite, 'cluster')
    const listed = await Sandbox.list({ ...opts, query: { metadata: { suite: 'cluster' } } }).nextItems()
    assert.deepEqual(listed.map((s) => s.sandboxId), [sbx.sandboxId])
    assert.equal(await sbx.isRunning(), true)
  } finally {
    await sbx.kill()
  }
  const after = await Sandbox.list({ ...opts, query: { metadata: { suite: 'cluster' } } }).nextItems()
  assert.deepEqual(after, [])
})

step('creates succeed with each node drained in turn; all are reached and listed', async () => {
  const made = []
  try {
    await nodeStatus('n1', 'draining')
    made.push(await Sandbox.create('base', { ...opts, metadata: { suite: 'drain' } }))
    await nodeStatus('n1', 'ready')
    await nodeStatus('n2', 'draining')
    made.push(await Sandbox.create('base', { ...opts, metadata: { suite: 'drain' } }))
    await nodeStatus('n2', 'ready')
    for (const sbx of made) {
      const run = await sbx.commands.run('echo ok')
      assert.equal(run.stdout.trim(), 'ok')
    }
    const listed = await Sandbox.list({ ...opts, query: { metadata: { suite: 'drain' } } }).nextItems()
    assert.deepEqual(listed.map((s) => s.sandboxId).sort(), made.map((s) => s.sandboxId).sort())
    const byNode = await Promise.all(nodes.map(async (node) => {
      const res = await fetch(`${node.url}/v2/sandboxes?metadata=suite%3Ddrain`, { headers: { 'X-API-Key': node.apiKey } })
      return (await res.json()).length
    }))
    assert.deepEqual(byNode, [2, 2], 'every node lists the cluster\'s sandboxes')
  } finally {
    await nodeStatus('n1', 'ready')
    await nodeStatus('n2', 'ready')
    for (const sbx of made) await sbx.kill()
  }
})

step('signed file URLs, multi-sandbox metrics and /metrics reach every owner', async () => {
  const made = []
  try {
    await nodeStatus('n2', 'draining')
    made.push(await Sandbox.create('base', { ...opts, secure: true, metadata: { suite: 'owners' } }))
    await nodeStatus('n2', 'ready')
    await nodeStatus('n1', 'draining')
    made.push(await Sandbox.create('base', { ...opts, secure: true, metadata: { suite: 'owners' } }))
    // n1 still serves what it holds, but only n2 takes requests that may go to any node
    const onN1 = made[0]
    const path = `/tmp/cluster-signed-${onN1.sandboxId}.txt`
    await onN1.files.write(path, 'signed through the gateway')
    const url = await onN1.downloadUrl(path, { useSignatureExpiration: 60_000 })
    assert.ok(url.startsWith(`${gateway.url}/files?`), url)
    const got = await fetch(url)
    assert.equal(got.status, 200, await got.clone().text())
    assert.equal(await got.text(), 'signed through the gateway')

    const ids = made.map((s) => s.sandboxId)
    const res = await fetch(`${gateway.url}/sandboxes/metrics?sandbox_ids=${ids.join(',')}`, {
      headers: { 'X-API-Key': gateway.apiKey },
    })
    assert.equal(res.status, 200, await res.clone().text())
    assert.deepEqual(Object.keys((await res.json()).sandboxes).sort(), [...ids].sort())

    const scrape = await (await fetch(`${gateway.url}/metrics`)).text()
    assert.match(scrape, /^aenv_cluster_nodes\{state="active"\} 1$/m)
    assert.match(scrape, /^aenv_cluster_nodes\{state="draining"\} 1$/m)
    assert.match(scrape, /^aenv_cluster_node_sandboxes\{node="n1",state="running"\} 1$/m)
    assert.match(scrape, /^aenv_cluster_node_sandboxes\{node="n2",state="running"\} 1$/m)
  } finally {
    await nodeStatus('n1', 'ready')
    await nodeStatus('n2', 'ready')
    for (const sbx of made) await sbx.kill()
  }
})
