// The server a container e2e suite runs: the server jar with the real container backend on the suite's own lane
// (names, run dir, cgroup parent, network slots and sandbox id prefix), so that it never touches a server or test run
// next to it, and envd from agentenv-envd/target; the leak check when it stops (host-leaks.mjs).
//
//   const LANE = { namePrefix: 'aenvk', runDir: '/run/agentenv/e2e-sdk', cgroupParent: 'agentenv-e2e-sdk',
//                  firstSlot: 12288, idPrefix: 'sdk-' }
//   before(async () => { if (!unready) ({ server, opts } = await startSuiteServer(LANE, { AENV_BACKEND_MAX_SANDBOXES: '16' })) })
//   after(async () => { if (server) await stopSuiteServer(server, LANE) })
//
// With AENV_E2E_THROUGH_GATEWAY=1 the suite runs against a local cluster instead (cluster-harness.mjs: three nodes with
// the suite's settings, each in a network namespace of its own, tagged after the lane) and the SDK options point at
// its first gateway, whose domain the nodes report: every control-plane request and every envd byte of the unchanged
// suite goes through a gateway. `server` is then the cluster: its url a gateway's, output() every node's log.
// Tests that cannot apply there are skipped in that mode (host-tests.mjs, GATEWAY_SKIPS below).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { startServer, repoRoot } from './control-plane-harness.mjs'
import { stopAndAssertNoLeftovers } from './host-leaks.mjs'
import { startCluster, serviceAddressOf } from './cluster-harness.mjs'

/** Whether the container suites run through a gateway of a local cluster (AENV_E2E_THROUGH_GATEWAY=1). */
export const throughGateway = process.env.AENV_E2E_THROUGH_GATEWAY === '1'

/** The tests that do not apply through a gateway, by suite file name and test name, and why: skipped in that mode only. */
export const GATEWAY_SKIPS = Object.freeze({
  'sdk-container-robustness.test.mjs': {
    'all slots taken: create fails at once with a RateLimitError; a kill frees one':
      'fills its one server\'s slots (a gateway places the next create on another node)',
    'a fork past the free slots gets the children that fit, RateLimitError the rest':
      'fills its one server\'s slots (a gateway places the next create on another node)',
  },
  'sdk-container-volumes.test.mjs': {
    'a read-only mount refuses writes and a full volume gives ENOSPC inside':
      'the local cluster keeps volumes in its shared volume directory, plain directories without a size limit',
    'a restarted server keeps the volume and mounts it again': 'restarts its one server on the same data dir',
  },
})

/** The cluster's tag of a suite's lane, in the gateway mode. */
const clusterTag = (lane) => lane.namePrefix.slice('aenv'.length, 'aenv'.length + 1)

/** The host's address the nodes of the suite's cluster reach (the gateway mode), for services a suite starts. */
export const clusterServiceAddress = (lane) => serviceAddressOf(clusterTag(lane))

/**
 * Where the container of the sandbox {@code sandboxId} is: runc's root, the container's name and its cgroup parent, on
 * the suite's server or, through a gateway, on the node that runs it.
 */
export function sandboxContainer(server, lane, sandboxId) {
  const places = throughGateway
    ? server.nodes.map((n) => ({ runcRoot: join(n.runDir, 'runc'), name: n.idPrefix + sandboxId, cgroupParent: n.cgroupParent }))
    : [{ runcRoot: join(lane.runDir, 'runc'), name: lane.idPrefix + sandboxId, cgroupParent: lane.cgroupParent }]
  const found = places.find((p) => existsSync(join(p.runcRoot, p.name)))
  if (!found) throw new Error(`no container of sandbox ${sandboxId} in ${places.map((p) => p.runcRoot).join(', ')}`)
  return found
}

/**
 * Starts the suite's server on {@code lane}; {@code env} adds the suite's own settings, {@code listenHost} the address
 * it listens on (startServer's, default 127.0.0.1), {@code dataDir} a kept data dir to start on again. Returns it and
 * SDK options.
 */
export async function startSuiteServer(lane, env = {}, { listenHost, dataDir } = {}) {
  delete process.env.E2B_DEBUG // any value turns on the SDK's debug mode
  if (throughGateway) {
    if (dataDir) throw new Error('a cluster does not restart on one server\'s data dir (GATEWAY_SKIPS)')
    // the shared storage in a directory: these suites test the API through a gateway, not S3 (cluster-failures does)
    const server = await startCluster({ tag: clusterTag(lane), env, store: 'directory' })
    const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 60_000 }
    return { server, opts }
  }
  const server = await startServer({
    backend: 'container',
    readyTimeoutMs: 120_000,
    listenHost,
    dataDir,
    env: {
      AENV_BACKEND_NAME_PREFIX: lane.namePrefix,
      AENV_BACKEND_RUN_DIR: lane.runDir,
      AENV_BACKEND_CGROUP_PARENT: lane.cgroupParent,
      AENV_BACKEND_FIRST_SLOT: String(lane.firstSlot),
      AENV_BACKEND_ID_PREFIX: lane.idPrefix,
      AENV_BACKEND_ENVD_DIR: join(repoRoot, 'agentenv-envd', 'target'),
      ...env,
    },
  })
  const opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 60_000 }
  return { server, opts }
}

/**
 * Stops it and fails when it left a mount (its data dir, runc's state root), a disk's loop device or a network
 * namespace of its lane.
 */
export async function stopSuiteServer(server, lane) {
  if (throughGateway) return server.stop()
  await stopAndAssertNoLeftovers(server, { runDir: lane.runDir, namePrefix: lane.namePrefix })
}
