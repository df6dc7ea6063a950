// The server a container e2e suite runs: the server jar with the real container backend on the suite's own lane
// (names, run dir, cgroup parent, network slots and sandbox id prefix), so that it never touches a server or test run
// next to it, and envd from agentenv-envd/target; the leak check when it stops (host-leaks.mjs).
//
//   const LANE = { namePrefix: 'aenvk', runDir: '/run/agentenv/e2e-sdk', cgroupParent: 'agentenv-e2e-sdk',
//                  firstSlot: 12288, idPrefix: 'sdk-' }
//   before(async () => { if (!unready) ({ server, opts } = await startSuiteServer(LANE, { AENV_BACKEND_MAX_SANDBOXES: '16' })) })
//   after(async () => { if (server) await stopSuiteServer(server, LANE) })
import { join } from 'node:path'
import { startServer, repoRoot } from './control-plane-harness.mjs'
import { stopAndAssertNoLeftovers } from './host-leaks.mjs'

/**
 * Starts the suite's server on {@code lane}; {@code env} adds the suite's own settings, {@code listenHost} the address
 * it listens on (startServer's, default 127.0.0.1), {@code dataDir} a kept data dir to start on again. Returns it and
 * SDK options.
 */
export async function startSuiteServer(lane, env = {}, { listenHost, dataDir } = {}) {
  delete process.env.E2B_DEBUG // any value turns on the SDK's debug mode
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
  await stopAndAssertNoLeftovers(server, { runDir: lane.runDir, namePrefix: lane.namePrefix })
}
