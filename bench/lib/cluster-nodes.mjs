// A cluster for the cluster benches: up to three container-backend nodes on this host (each on its own bench lane
// layout: names, runc dir, cgroup parent, slots, id prefix), a private PostgreSQL (e2e/lib/postgres-harness.mjs), a
// shared-directory object store for paused states and snapshots, and a gateway in front. Nodes and the gateway run
// with the JVM options of scripts/serve.sh (bench/lib/container-server.mjs), 1 CPU and 512 MiB per sandbox.
//
//   const cluster = await startBenchCluster(lane, { nodes: 2, poolSize: 0 })
//   ... cluster.gateway.url, cluster.nodes[0].url, await cluster.setStatus('n1', 'draining') ...
//   await cluster.stop()
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, freePort, SERVE_JVM_OPTIONS } from '../../e2e/lib/control-plane-harness.mjs'
import { startPostgres } from '../../e2e/lib/postgres-harness.mjs'
import { startBenchServer } from './container-server.mjs'
import { LAYOUTS } from './lane.mjs'

const NODE_LAYOUTS = [LAYOUTS.clusterNodeA, LAYOUTS.clusterNodeB, LAYOUTS.clusterNodeC]

/**
 * Starts PostgreSQL, {@code nodes} nodes (n1, n2, ...) and a gateway; {@code poolSize} is every node's warm pool
 * (undefined: the server's default), {@code env} adds settings to every node. {@code gatewayBJvm} (JVM options added
 * to the serve.sh ones) starts a second gateway with them, for an A/B of gateway settings in one run.
 */
export async function startBenchCluster(lane, { nodes = 3, poolSize, maxSandboxes = 48, env = {}, gatewayBJvm } = {}) {
  if (nodes < 1 || nodes > NODE_LAYOUTS.length) throw new Error(`1 to ${NODE_LAYOUTS.length} nodes`)
  const pg = await startPostgres()
  const shared = mkdtempSync(join(tmpdir(), 'aenv-bench-shared-'))
  const cluster = {
    AENV_CLUSTER_DATABASE_URL: pg.jdbcUrl,
    AENV_CLUSTER_DATABASE_USER: pg.user,
  }
  const started = []
  let gateway
  let gatewayB
  const stop = async () => {
    if (gatewayB) await gatewayB.stop()
    if (gateway) await gateway.stop()
    for (const node of started.reverse()) await node.stop()
    await pg.stop()
    rmSync(shared, { recursive: true, force: true })
  }
  try {
    for (let n = 0; n < nodes; n++) {
      const port = await freePort()
      started.push(await startBenchServer(lane, NODE_LAYOUTS[n], {
        poolSize,
        maxSandboxes,
        port,
        env: {
          ...cluster,
          AENV_OBJECT_STORE_DIR: shared,
          AENV_NODE_ID: `n${n + 1}`,
          AENV_NODE_ADDRESS: `http://127.0.0.1:${port}`,
          ...env,
        },
      }))
    }
    gateway = await startServer({ backend: 'mock', args: ['gateway'], jvmOptions: SERVE_JVM_OPTIONS, env: cluster })
    if (gatewayBJvm) {
      gatewayB = await startServer({
        backend: 'mock', args: ['gateway'], jvmOptions: [...SERVE_JVM_OPTIONS, ...gatewayBJvm], env: cluster,
      })
    }
  } catch (e) {
    await stop()
    throw e
  }
  const nodesList = [...started]
  return {
    pg,
    nodes: nodesList,
    gateway,
    gatewayB,
    /** Sets a node's status through the gateway: 'draining' or 'ready'. */
    async setStatus(id, status) {
      const res = await fetch(`${gateway.url}/nodes/${id}`, {
        method: 'POST',
        headers: { 'X-API-Key': gateway.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ status }),
      })
      if (res.status !== 204) throw new Error(`node ${id} ${status}: ${res.status} ${await res.text()}`)
    },
    stop,
  }
}
