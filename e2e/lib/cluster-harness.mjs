// A local cluster for e2e tests: scripts/cluster.sh (the documented command, scripts/lib/cluster.sh) started with
// --no-build and settings of the test's own: a temp state dir, free ports, a tag that names its namespaces, links,
// backend prefixes, run dirs and cgroup parents, the test JVM options. Three nodes (the container backend, each in a
// network namespace of its own), two gateways, PostgreSQL and S3Proxy.
//
//   const cluster = await startCluster({ tag: 'f', env: { AENV_CLUSTER_LEASE_SECONDS: '3' } })
//   ... the SDK with { apiUrl: cluster.gateways[0], sandboxUrl: cluster.gateways[0], apiKey: cluster.apiKey } ...
//   cluster.sql('select count(*) from sandbox')          // the cluster's database, as its owner role
//   await cluster.stop()          // SIGTERM to the script, then fails naming anything it left on the host
//
// Needs root and a host prepared by scripts/setup-host.sh, plus the built jars (agentenv-server, agentenv-envd, the
// objectstore module's S3Proxy copy).
import { spawn, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, cpSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, basename } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { freePort, repoRoot, TEST_API_KEY } from './control-plane-harness.mjs'
import { mountsUnder, loopDevicesUnder, netnsOf } from './host-leaks.mjs'

/** The JVM options of every node and gateway in tests: C1 only and a small heap, as startServer's. */
const TEST_JVM = '-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx256m --enable-native-access=ALL-UNNAMED'
/** Sandbox slots of every test cluster's nodes: node i from FIRST_SLOT + (i - 1) * SLOTS (in its own namespace). */
const FIRST_SLOT = 14592
const SLOTS = 64
const NODES = [1, 2, 3]

/** The first three octets of the addresses of the cluster tagged {@code tag}. */
const clusterNet = (tag) => `10.201.${tag.charCodeAt(0) - 96}`

/** The host's address that the nodes of the cluster tagged {@code tag} reach (PostgreSQL and S3Proxy listen there). */
export const serviceAddressOf = (tag) => `${clusterNet(tag)}.1`

/**
 * Starts a cluster tagged {@code tag} (one letter; two clusters at once need two) with {@code env} given to every node
 * and gateway (AENV_BACKEND_*, lease settings); {@code store} is the nodes' shared storage, 's3' (S3Proxy) or
 * 'directory' (lighter, for suites that do not test S3). Returns its gateways' URLs, the API key, the nodes (id, url,
 * pid) and what stops it.
 */
export async function startCluster({ tag, env = {}, store = 's3', readyTimeoutMs = 300_000 }) {
  if (!/^[a-z]$/.test(tag)) throw new Error(`a cluster's tag is one lowercase letter: ${tag}`)
  const dir = mkdtempSync(join(tmpdir(), `aenv-cluster-${tag}-`))
  const [g1, g2, pgPort, s3Port] = [await freePort(), await freePort(), await freePort(), await freePort()]
  const childEnv = { ...process.env }
  for (const k of Object.keys(childEnv)) if (k.startsWith('AENV_')) delete childEnv[k]
  Object.assign(childEnv, {
    AENV_LOCAL_CLUSTER_DIR: dir,
    AENV_LOCAL_CLUSTER_TAG: tag,
    AENV_LOCAL_CLUSTER_NET: clusterNet(tag),
    AENV_LOCAL_CLUSTER_GATEWAY_PORTS: `${g1} ${g2}`,
    AENV_LOCAL_CLUSTER_PG_PORT: String(pgPort),
    AENV_LOCAL_CLUSTER_S3_PORT: String(s3Port),
    AENV_LOCAL_CLUSTER_FIRST_SLOT: String(FIRST_SLOT),
    AENV_LOCAL_CLUSTER_SLOTS: String(SLOTS),
    AENV_LOCAL_CLUSTER_NODE_JVM: TEST_JVM,
    AENV_LOCAL_CLUSTER_GATEWAY_JVM: TEST_JVM,
    AENV_LOCAL_CLUSTER_STORE: store,
    AENV_API_KEY: TEST_API_KEY,
    ...env,
  })
  const child = spawn(join(repoRoot, 'scripts', 'cluster.sh'), ['--no-build'], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  const exited = new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal })))
  let hasExited = false
  exited.then(() => { hasExited = true })

  const deadline = Date.now() + readyTimeoutMs
  while (!output.includes('\ncluster ready\n')) {
    if (hasExited || Date.now() > deadline) {
      if (!hasExited) child.kill('SIGTERM')
      await exited
      const logs = nodeLogs(dir)
      rmSync(dir, { recursive: true, force: true })
      throw new Error(`the cluster did not start:\n${output}\n${logs.slice(-20_000)}`)
    }
    await delay(100)
  }
  const info = Object.fromEntries(readFileSync(join(dir, 'cluster.env'), 'utf8').trim().split('\n')
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]))
  const nodeUrls = info.NODE_URLS.trim().split(' ')
  const pidOf = (name) => Number(readFileSync(join(dir, 'pids', name), 'utf8').trim())
  const nodes = NODES.map((i) => ({
    id: `n${i}`,
    url: nodeUrls[i - 1],
    pid: pidOf(`n${i}`),
    namePrefix: `aenv${tag}${i}`,
    runDir: `/run/agentenv/cluster-${tag}${i}`,
    cgroupParent: `agentenv-cluster-${tag}${i}`,
    idPrefix: `cl${tag}${i}-`,
    home: join(dir, 'nodes', `n${i}`),
  }))
  const gateways = info.GATEWAY_URLS.split(' ')
  const gatewayPids = [pidOf('g1'), pidOf('g2')]

  return {
    tag,
    dir,
    /** The host's address the nodes reach (PostgreSQL and S3Proxy listen there): for other services of a test. */
    serviceAddress: serviceAddressOf(tag),
    gateways,
    url: gateways[0],
    apiKey: info.API_KEY,
    nodes,
    gatewayPids,
    /** Every node's log so far, one after the other. */
    output: () => nodeLogs(dir),
    /** One SQL statement's rows (psql's unaligned output, one line per row, fields split by '|'). */
    sql(statement) {
      const out = execFileSync('runuser', ['-u', 'postgres', '--', '/usr/lib/postgresql/15/bin/psql', '-h', join(dir, 'postgres'),
        '-p', String(pgPort), '-U', 'agentenv', '-d', 'agentenv', '-AtXq', '-c', statement], { stdio: 'pipe' }).toString()
      return out.split('\n').filter((l) => l.length > 0).map((l) => l.split('|'))
    },
    /** PostgreSQL stopped (fast) and started again in place. */
    restartPostgres() {
      execFileSync('runuser', ['-u', 'postgres', '--', '/usr/lib/postgresql/15/bin/pg_ctl', '-D', join(dir, 'postgres', 'data'),
        '-l', join(dir, 'logs', 'postgres.log'), '-m', 'fast', '-w', 'restart'], { stdio: 'pipe' })
    },
    /**
     * SIGTERM to the script, which stops everything; then throws naming what is left on the host (processes,
     * namespaces, links, mounts, loop devices, cgroups, the service address). Keeps the logs in AENV_E2E_SERVER_LOGS.
     */
    async stop({ timeoutMs = 240_000 } = {}) {
      if (!hasExited) child.kill('SIGTERM')
      const cancel = new AbortController()
      const timer = delay(timeoutMs, 'timeout', { signal: cancel.signal }).catch(() => 'cancelled')
      const result = await Promise.race([exited, timer])
      cancel.abort() // do not keep the event loop alive for the rest of the timeout
      if (result === 'timeout') {
        child.kill('SIGKILL')
        await exited
      }
      reportFailures(dir, tag)
      keepLogs(dir, tag)
      const left = clusterLeftovers({ dir, tag, nodes, pids: [...nodes.map((n) => n.pid), ...gatewayPids] })
      if (result === 'timeout') throw new Error(`the cluster did not stop within ${timeoutMs} ms:\n${output}`)
      if (Object.values(left).some((l) => l.length > 0)) {
        throw new Error(`the stopped cluster left host resources behind (state dir ${dir} kept): ${JSON.stringify(left)}\n${output}`)
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

function nodeLogs(dir) {
  return NODES.map((i) => {
    try { return readFileSync(join(dir, 'logs', `n${i}.log`), 'utf8') } catch { return '' }
  }).join('\n')
}

/**
 * Prints to stderr what the cluster's daemons logged as failed (ERROR lines, and requests answered with a 5xx), each
 * with the innermost cause of its stack trace, at most MAX_FAILURES_SHOWN per daemon: a failed test's cause, where the
 * logs themselves are not kept (AENV_E2E_SERVER_LOGS unset, as in CI).
 */
function reportFailures(dir, tag) {
  const logsDir = join(dir, 'logs')
  if (!existsSync(logsDir)) return
  for (const file of readdirSync(logsDir).filter((f) => /^[ng]\d+\.log$/.test(f)).sort()) {
    const lines = readFileSync(join(logsDir, file), 'utf8').split('\n')
    const failures = []
    lines.forEach((line, i) => {
      if (!/^\S+ (ERROR |WARN .*request failed)/.test(line)) return
      const trace = lines.slice(i + 1, i + 200)
      const end = trace.findIndex((l) => /^\d{4}-\d\d-\d\dT/.test(l)) // the next entry
      const cause = trace.slice(0, end < 0 ? trace.length : end).filter((l) => l.startsWith('Caused by:')).pop()
      failures.push(cause ? `${line}\n    ${cause}` : line)
    })
    if (failures.length === 0) continue
    const shown = failures.slice(-MAX_FAILURES_SHOWN)
    process.stderr.write(`[cluster ${tag} ${file}] ${failures.length} failure(s) logged${failures.length > shown.length ? `, the last ${shown.length}` : ''}:\n`
      + shown.map((f) => `  ${f.slice(0, 2000)}\n`).join(''))
  }
}

const MAX_FAILURES_SHOWN = 12

function keepLogs(dir, tag) {
  const keep = process.env.AENV_E2E_SERVER_LOGS
  if (!keep || !existsSync(join(dir, 'logs'))) return
  mkdirSync(keep, { recursive: true })
  cpSync(join(dir, 'logs'), join(keep, `cluster-${tag}-${basename(dir)}`), { recursive: true })
}

const alive = (pid) => {
  if (!pid) return false
  try { process.kill(pid, 0); return true } catch { return false }
}

/** What a stopped cluster left on the host. */
export function clusterLeftovers({ dir, tag, nodes, pids = [] }) {
  const cgroups = []
  for (const controller of existsSync('/sys/fs/cgroup') ? readdirSync('/sys/fs/cgroup') : []) {
    for (const node of nodes) {
      if (existsSync(join('/sys/fs/cgroup', controller, node.cgroupParent))) cgroups.push(`${controller}/${node.cgroupParent}`)
    }
  }
  return {
    processes: pids.filter(alive).map(String),
    mounts: mountsUnder([dir, ...nodes.map((n) => n.runDir)]),
    loops: loopDevicesUnder(dir),
    netns: [...nodes.flatMap((n) => netnsOf(n.namePrefix)),
      ...nodes.map((n) => `agentenv-node-${n.id.replace('n', tag)}`).filter((ns) => existsSync(join('/run/netns', ns)))],
    links: nodes.map((n) => `acl${n.id.replace('n', tag)}`).filter((l) => existsSync(join('/sys/class/net', l))),
    cgroups,
    addresses: execFileSync('ip', ['-o', '-4', 'addr', 'show', 'dev', 'lo']).toString().includes(` ${serviceAddressOf(tag)}/32`)
      ? [`${serviceAddressOf(tag)}/32 on lo`] : [],
    nft: execFileSync('nft', ['list', 'tables']).toString().split('\n').filter((t) => t === `table ip agentenv_cluster_${tag}`),
  }
}
