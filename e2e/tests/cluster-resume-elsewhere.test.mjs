// A paused sandbox of a node killed with SIGKILL resumes on another node of a real local cluster (cluster-harness.mjs,
// container backend): its checkpoint and files reach the other node through the object store (S3Proxy), since the
// killed node's disk is out of reach once it is dead. Needs root and scripts/setup-host.sh; skipped otherwise (failed
// when AENV_REQUIRE_HOST_TESTS=1).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Sandbox } from 'e2b'
import { unready } from '../lib/host-tests.mjs'
import { startCluster } from '../lib/cluster-harness.mjs'
import { api, create, setNodeStatus, ownerOf, assertOwnedOnce } from '../lib/cluster-checks.mjs'
import { waitFor } from '../lib/envd-harness.mjs'

let cluster
const step = (name, fn) => test(name, { skip: unready ? `host test skipped: ${unready}` : false, timeout: 300_000 }, fn)

before(async () => {
  if (unready) return
  delete process.env.E2B_DEBUG // any value turns on the SDK's debug mode
  cluster = await startCluster({
    tag: 'h',
    env: { AENV_CLUSTER_LEASE_SECONDS: '3', AENV_CLUSTER_DEAD_AFTER_SECONDS: '4', AENV_BACKEND_MAX_SANDBOXES: '8' },
  })
})

after(async () => {
  if (cluster) await cluster.stop()
})

step('a paused sandbox of a killed node resumes on another node with its files', async () => {
  const gateway = cluster.gateways[1]
  const opts = { apiUrl: gateway, sandboxUrl: gateway, apiKey: cluster.apiKey, requestTimeoutMs: 60_000 }
  await setNodeStatus(cluster, gateway, 'n1', 'draining')
  await setNodeStatus(cluster, gateway, 'n2', 'draining')
  const made = await create(cluster, gateway, { resume: 'elsewhere' })
  await setNodeStatus(cluster, gateway, 'n1', 'ready')
  await setNodeStatus(cluster, gateway, 'n2', 'ready')
  assert.equal(made.status, 201, JSON.stringify(made.body))
  assert.equal(ownerOf(cluster, made.id), 'n3')
  const sbx = await Sandbox.connect(made.id, opts)
  await sbx.files.write('/home/user/kept.txt', 'from n3')
  assert.equal((await api(cluster, gateway, 'POST', `/sandboxes/${made.id}/pause`)).status, 204)

  process.kill(cluster.nodes[2].pid, 'SIGKILL')
  // declared dead: its paused sandbox is released to any node
  await waitFor(() => ownerOf(cluster, made.id) === null, { timeoutMs: 120_000, what: 'the paused sandbox released' })

  const resumed = await Sandbox.connect(made.id, opts)
  assert.ok(['n1', 'n2'].includes(ownerOf(cluster, made.id)))
  assert.equal(await resumed.files.read('/home/user/kept.txt'), 'from n3')
  assert.equal((await resumed.commands.run('echo resumed elsewhere')).stdout, 'resumed elsewhere\n')
  assertOwnedOnce(cluster, { nodes: cluster.nodes.slice(0, 2) })
  await resumed.kill()
})
