// Starts the envd jar as a local process for end-to-end tests and stops it again.
//
//   const envd = await startEnvd({ init: { envVars: { FOO: 'bar' } } })
//   ... drive http://localhost:49983 with the e2b SDK in debug mode ...
//   await envd.stop()            // SIGTERM, waits for the exit, fails if envd does not exit
//
// envd listens on TCP 49983 (what the SDK's debug mode uses) and on a unix socket in a fresh temp dir.
// Requires the built jar (agentenv-envd/target/agentenv-envd.jar, produced by `mvn package`/`verify`).
import { spawn, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as delay } from 'node:timers/promises'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
// AENV_ENVD_DIR points at another build output (a directory holding agentenv-envd.jar and envd.aot).
const envdDir = process.env.AENV_ENVD_DIR || join(repoRoot, 'agentenv-envd', 'target')
export const envdJar = join(envdDir, 'agentenv-envd.jar')
export const envdAotCache = join(envdDir, 'envd.aot')
export const ENVD_PORT = 49983

function javaBinary() {
  const home = process.env.JAVA_HOME || '/usr/lib/jvm/temurin-25-jdk-amd64'
  return join(home, 'bin', 'java')
}

/** The JVM options envd runs with; the AOT cache must be recorded with the same ones (see bench/envd/aot-cache.sh). */
export function envdJvmOptions() {
  const built = join(envdDir, 'jvm.options')
  const file = existsSync(built) ? built : join(repoRoot, 'agentenv-envd', 'jvm.options')
  return readFileSync(file, 'utf8')
    .split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
}

/** The JVM command line envd is started with (small heap, SerialGC, the AOT cache when the build produced one). */
export function envdCommand(extraArgs = []) {
  const jvm = envdJvmOptions()
  if (existsSync(envdAotCache)) jvm.push(`-XX:AOTCache=${envdAotCache}`)
  return [javaBinary(), [...jvm, '-jar', envdJar, ...extraArgs]]
}

/**
 * Starts envd, waits for GET /health → 204, then POSTs /init when `init` is given.
 * @param {{port?: number, init?: object, args?: string[], readyTimeoutMs?: number}} opts
 */
export async function startEnvd({ port = ENVD_PORT, init, args = [], readyTimeoutMs = 20_000 } = {}) {
  if (!existsSync(envdJar)) {
    throw new Error(`envd jar missing: ${envdJar} (build it: mvn -B -pl agentenv-envd -am package -DskipTests)`)
  }
  // Something already answering on the port would pass the readiness check below in our envd's place.
  if (await fetch(`http://localhost:${port}/health`).then(() => true, () => false)) {
    throw new Error(`port ${port} is already in use (another envd or test run?)`)
  }
  const dir = mkdtempSync(join(tmpdir(), 'envd-e2e-'))
  const socketPath = join(dir, 'envd.sock')
  const [java, argv] = envdCommand(['--port', String(port), '--unix-socket', socketPath, '--exited-retention', '60', ...args])
  const child = spawn(java, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  const exited = new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal })))
  let hasExited = false
  exited.then(() => { hasExited = true })

  const url = `http://localhost:${port}`
  const deadline = Date.now() + readyTimeoutMs
  for (;;) {
    if (hasExited) throw new Error(`envd exited before it was ready:\n${output}`)
    try {
      const res = await fetch(`${url}/health`)
      if (res.status === 204) break
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`envd not ready after ${readyTimeoutMs} ms:\n${output}`)
    }
    await delay(20)
  }

  const headers = {}
  if (init) {
    const res = await fetch(`${url}/init`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(init),
    })
    if (res.status !== 204) throw new Error(`POST /init answered ${res.status}: ${await res.text()}`)
    if (init.accessToken) headers['X-Access-Token'] = init.accessToken
  }

  return {
    url,
    port,
    socketPath,
    pid: child.pid,
    output: () => output,
    /** SIGTERM, then wait (SIGKILL after the timeout); throws if envd had to be killed or exited with an error. */
    async stop(timeoutMs = 10_000) {
      if (!hasExited) child.kill('SIGTERM')
      const result = await Promise.race([exited, delay(timeoutMs).then(() => null)])
      rmSync(dir, { recursive: true, force: true })
      if (result === null) {
        child.kill('SIGKILL')
        await exited
        throw new Error(`envd did not exit within ${timeoutMs} ms of SIGTERM:\n${output}`)
      }
      // A JVM stopped by SIGTERM after its shutdown hooks ran exits with 143.
      if (result.code !== 143 && result.code !== 0) {
        throw new Error(`envd exited with ${JSON.stringify(result)}:\n${output}`)
      }
      return result
    },
  }
}

/**
 * An account for "run as another user" tests, created idempotently (needs root; CI runs as root), with `home` as its
 * home directory when given (envd resolves a user's relative paths against it). Returns null when not root.
 */
export function ensureTestUser(name = 'envd-e2e', { home } = {}) {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' })
    if (home) execFileSync('usermod', ['--home', home, name], { stdio: 'ignore' })
  } catch {
    const homeArgs = home ? ['--home-dir', home, '--no-create-home'] : ['--create-home']
    execFileSync('useradd', [...homeArgs, '--shell', '/bin/bash', name], { stdio: 'ignore' })
  }
  return name
}

/** Waits until `check()` is truthy, polling every 20 ms, failing after `timeoutMs`. */
export async function waitFor(check, { timeoutMs = 10_000, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await delay(20)
  }
}
