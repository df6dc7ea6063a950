// Starts the control-plane server jar for end-to-end tests and stops it again.
//
//   const server = await startServer({ backend: 'mock' })
//   ... drive server.url with the e2b SDK (apiUrl / E2B_API_URL) using server.apiKey ...
//   await server.stop()          // SIGTERM, waits for the exit, removes the temp data dir
//
// The server runs with a fresh temp data dir (AENV_HOME), a fixed API key (AENV_API_KEY) and a free port on 127.0.0.1
// (`listenHost: '0.0.0.0'` listens on every address, as a production server does; the URL stays on 127.0.0.1).
// With backend 'mock' the mock backend's jar is put on the classpath (it is a test double: no envd, no processes).
// `port` fixes the port (a cluster node must name its address before it listens); `args: ['gateway']` starts a
// cluster's gateway instead of a server (it answers /health once a node of its cluster serves).
// Requires the built jars (`mvn -B package -DskipTests` or `scripts/test.sh`).
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as delay } from 'node:timers/promises'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const serverJar = join(repoRoot, 'agentenv-server', 'target', 'agentenv-server.jar')
export const TEST_API_KEY = 'e2b_' + '0123456789abcdef'.repeat(3).slice(0, 40)

function javaBinary() {
  const home = process.env.JAVA_HOME || '/usr/lib/jvm/temurin-25-jdk-amd64'
  return join(home, 'bin', 'java')
}

/** The module jar (not -sources/-tests) under <module>/target. */
export function moduleJar(module) {
  const target = join(repoRoot, module, 'target')
  const jar = existsSync(target)
    ? readdirSync(target).find((f) => f.startsWith(module) && f.endsWith('.jar') && !/-(sources|tests|javadoc)\.jar$/.test(f))
    : undefined
  if (!jar) throw new Error(`${module} jar missing under ${target} (build it: mvn -B -pl ${module} -am package -DskipTests)`)
  return join(target, jar)
}

/** The server's AOT cache (classes and JIT profiles), recorded by `mvn package` with the server's jvm.options. */
export const serverAotCache = join(repoRoot, 'agentenv-server', 'target', 'agentenv-server.aot')

/** Only a cache newer than the server jar is used (the JVM checks a jar's size, not always its contents). */
function aotCacheUsable() {
  return existsSync(serverAotCache) && existsSync(serverJar) && statSync(serverAotCache).mtimeMs > statSync(serverJar).mtimeMs
}

/**
 * The JVM options scripts/serve.sh runs the server with (what users run; full JIT, agentenv-server/jvm.options, and
 * the AOT cache when it was built), for benchmarks. BENCH_SERVER_AOT=off leaves the cache out and
 * BENCH_SERVER_JVM_EXTRA adds options (space-separated), for A/B runs.
 */
export const SERVE_JVM_OPTIONS = [
  ...readFileSync(join(repoRoot, 'agentenv-server', 'jvm.options'), 'utf8').split('\n').map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#')),
  ...(aotCacheUsable() && process.env.BENCH_SERVER_AOT !== 'off' ? [`-XX:AOTCache=${serverAotCache}`] : []),
  ...(process.env.BENCH_SERVER_JVM_EXTRA ?? '').split(' ').filter(Boolean),
]

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort() {
  return new Promise((resolvePort, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolvePort(port))
    })
  })
}

/**
 * Starts the server and waits until GET /health answers 204.
 * Pass `dataDir` (from a previous server's `stop({ keepDataDir: true })`) to restart on the same state.
 * `jvmOptions` replaces the JVM options (default: quick start-up for tests, C1 only; benchmarks pass SERVE_JVM_OPTIONS).
 * `listenHost` is the address the server listens on (default 127.0.0.1); the returned URL is on 127.0.0.1 either way.
 * @param {{backend?: string, extraClasspath?: string[], env?: object, dataDir?: string, readyTimeoutMs?: number, jvmOptions?: string[], listenHost?: string}} opts
 */
export async function startServer({ backend = 'mock', extraClasspath = [], env = {}, dataDir: reuseDir, readyTimeoutMs = 30_000, jvmOptions, listenHost = '127.0.0.1', port: chosenPort, args = [] } = {}) {
  if (!existsSync(serverJar)) {
    throw new Error(`server jar missing: ${serverJar} (build it: mvn -B -pl agentenv-server -am package -DskipTests)`)
  }
  const classpath = [serverJar, ...(backend === 'mock' ? [moduleJar('agentenv-backend-mock')] : []), ...extraClasspath]
  const dataDir = reuseDir ?? mkdtempSync(join(tmpdir(), 'aenv-server-e2e-'))
  const port = chosenPort ?? await freePort()
  const childEnv = { ...process.env, ...env }
  for (const k of Object.keys(childEnv)) if (k.startsWith('AENV_') && !(k in env)) delete childEnv[k]
  Object.assign(childEnv, {
    AENV_BACKEND: backend,
    AENV_HOME: dataDir,
    AENV_API_KEY: TEST_API_KEY,
    AENV_LISTEN: `${listenHost}:${port}`,
    ...env,
  })
  const jvm = jvmOptions ?? ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xmx256m', '--enable-native-access=ALL-UNNAMED']
  const child = spawn(javaBinary(), [...jvm, '-cp', classpath.join(':'), 'io.agentenv.server.Main', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  const exited = new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal })))
  let hasExited = false
  exited.then(() => { hasExited = true })

  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + readyTimeoutMs
  for (;;) {
    if (hasExited) {
      rmSync(dataDir, { recursive: true, force: true })
      throw new Error(`server exited before it was ready:\n${output}`)
    }
    try {
      const res = await fetch(`${url}/health`)
      if (res.status === 204) break
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      await exited
      rmSync(dataDir, { recursive: true, force: true })
      throw new Error(`server not ready after ${readyTimeoutMs} ms:\n${output}`)
    }
    await delay(50)
  }

  return {
    url,
    port,
    apiKey: TEST_API_KEY,
    dataDir,
    pid: child.pid,
    output: () => output,
    /** SIGTERM, wait (bounded) for a clean exit, remove the data dir (unless kept); throws if the server had to be killed. */
    async stop({ timeoutMs = 30_000, keepDataDir = false } = {}) {
      if (!hasExited) child.kill('SIGTERM')
      exited.then(() => keepOutput(port, output))
      const cancel = new AbortController()
      const timer = delay(timeoutMs, 'timeout', { signal: cancel.signal }).catch(() => 'cancelled')
      const result = await Promise.race([exited, timer])
      cancel.abort() // do not keep the event loop alive for the rest of the timeout
      if (!keepDataDir || result === 'timeout') rmSync(dataDir, { recursive: true, force: true })
      if (result === 'timeout') {
        child.kill('SIGKILL')
        await exited
        throw new Error(`server did not stop within ${timeoutMs} ms:\n${output}`)
      }
      // a JVM stopped by SIGTERM exits with 143 after running its shutdown hooks
      if (result.code !== 0 && result.code !== 143) {
        throw new Error(`server exited with ${JSON.stringify(result)}:\n${output}`)
      }
      return result
    },
  }
}

/** With AENV_E2E_SERVER_LOGS set to a directory, a stopped server's output is kept there as server-<port>.log. */
function keepOutput(port, output) {
  const dir = process.env.AENV_E2E_SERVER_LOGS
  if (!dir) return
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, `server-${port}.log`), output)
}
