// What the template benches share: the server on a bench lane (lane layout `templates`), `bin/aenv` against it, a
// build's log with the server's timestamps, and the figures they print.
import { spawn } from 'node:child_process'
import { writeFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { repoRoot } from '../../e2e/lib/control-plane-harness.mjs'
import { startBenchServer } from '../lib/container-server.mjs'
import { LAYOUTS } from '../lib/lane.mjs'

/** The container backend on {@code lane} with the templates layout, a warm pool of 2 (the default) unless told. */
export function startTemplatesServer(lane, { poolSize = process.env.AENV_BACKEND_POOL_SIZE ?? 2, env = {} } = {}) {
  return startBenchServer(lane, LAYOUTS.templates, { poolSize, env })
}

/** The SDK's connection options for {@code server}. */
export function sdkOptions(server) {
  return { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 300_000 }
}

/**
 * Runs `bin/aenv args...` against {@code server}; resolves with its wall time in ms (spawn to exit) and its output.
 * Rejects when it exits non-zero.
 */
export function aenv(server, args) {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const child = spawn(join(repoRoot, 'bin', 'aenv'), args, {
      env: { ...process.env, AENV_API_URL: server.url, AENV_API_KEY: server.apiKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { out += d })
    child.once('error', reject)
    child.once('exit', (code) => {
      const ms = performance.now() - start
      if (code === 0) resolve({ ms, out })
      else reject(new Error(`aenv ${args.join(' ')} exited ${code}:\n${out}`))
    })
  })
}

/** A build's whole log (GET /templates/{id}/builds/{buildID}/status), each entry with its server timestamp in ms. */
export async function buildLog(server, templateId, buildId) {
  const entries = []
  for (;;) {
    const res = await fetch(`${server.url}/templates/${templateId}/builds/${buildId}/status?logsOffset=${entries.length}`,
      { headers: { 'X-API-Key': server.apiKey } })
    if (res.status !== 200) throw new Error(`build status ${templateId}/${buildId}: ${res.status} ${await res.text()}`)
    const page = (await res.json()).logEntries
    if (page.length === 0) return entries
    for (const e of page) entries.push({ ...e, ms: Date.parse(e.timestamp) })
  }
}

/** The first entry whose message starts with {@code prefix} (undefined if none). */
export const entry = (log, prefix) => log.find((e) => e.message.startsWith(prefix))

/** The median. */
export function p50(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export const ms = (v) => (v === undefined || Number.isNaN(v) ? '-' : `${v.toFixed(0)} ms`)

/** The load average as the run's header prints it. */
export const load = () => loadavg().map((l) => l.toFixed(2)).join(' ')

/**
 * Ends a run: on {@code error} prints it and keeps the server's log in the temp dir; then stops the server, the
 * registry and removes {@code work}, each whatever the one before did.
 */
export async function endRun(script, { server, registry, work }, error) {
  if (error) {
    console.error(error)
    process.exitCode = 1
    if (server) {
      const file = join(tmpdir(), `aenv-bench-${script}-server-${server.port}.log`)
      writeFileSync(file, server.output())
      console.error(`server log: ${file}`)
    }
  }
  try {
    if (server) await server.stop()
  } finally {
    try {
      if (registry) await registry.stop()
    } finally {
      if (work) rmSync(work, { recursive: true, force: true })
    }
  }
}
