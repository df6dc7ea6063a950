// The server the container benches measure: the container backend on a bench lane, with the JVM options of
// scripts/serve.sh (not the tests' quick-start options), 1 CPU and 512 MiB per sandbox.
import { join } from 'node:path'
import { startServer, repoRoot, SERVE_JVM_OPTIONS } from '../../e2e/lib/control-plane-harness.mjs'
import { laneEnv } from './lane.mjs'

/**
 * Starts it on {@code lane} with {@code layout} (lane.mjs LAYOUTS) and a warm pool of {@code poolSize} (undefined: the
 * server's default);
 * AENV_BACKEND_ENVD_DIR in the environment picks another envd build; {@code env} adds or overrides settings;
 * {@code port} fixes the port (a cluster node names its address before it listens).
 */
export function startBenchServer(lane, layout, { poolSize, maxSandboxes = 48, env = {}, port }) {
  return startServer({
    backend: 'container',
    port,
    jvmOptions: SERVE_JVM_OPTIONS,
    readyTimeoutMs: 120_000,
    env: {
      ...laneEnv(lane, layout),
      AENV_BACKEND_MAX_SANDBOXES: String(maxSandboxes),
      AENV_BACKEND_CPU_COUNT: '1',
      AENV_BACKEND_MEMORY_MB: '512',
      ...(poolSize === undefined ? {} : { AENV_BACKEND_POOL_SIZE: String(poolSize) }),
      AENV_BACKEND_ENVD_DIR: process.env.AENV_BACKEND_ENVD_DIR ?? join(repoRoot, 'agentenv-envd', 'target'),
      ...env,
    },
  })
}
