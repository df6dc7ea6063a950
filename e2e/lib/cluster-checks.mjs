// Checks and helpers for the failure tests of a local cluster (cluster-harness.mjs): its API through a gateway, who
// owns a sandbox by the cluster's database, and which node runs each sandbox by runc's own state on the host.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const ID = /^[a-z0-9-]+$/

/** An API request through a gateway with the cluster's key: { status, body (JSON when it parses) }. */
export async function api(cluster, gateway, method, path, body) {
  const res = await fetch(gateway + path, {
    method,
    headers: { 'X-API-Key': cluster.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let parsed = text
  try { parsed = JSON.parse(text) } catch { /* not JSON */ }
  return { status: res.status, body: parsed }
}

/** A create through a gateway: { status, id } (id only for a 201). */
export async function create(cluster, gateway, metadata = {}) {
  const res = await api(cluster, gateway, 'POST', '/sandboxes', { templateID: 'base', timeout: 600, metadata })
  return { status: res.status, id: res.status === 201 ? res.body.sandboxID : undefined, body: res.body }
}

/** Drains or undrains a node through a gateway. */
export async function setNodeStatus(cluster, gateway, node, status) {
  const res = await api(cluster, gateway, 'POST', `/nodes/${node}`, { status })
  assert.equal(res.status, 204, JSON.stringify(res.body))
}

/** The node the cluster's database names as the sandbox's owner (null: none, undefined: no record). */
export function ownerOf(cluster, id) {
  assert.match(id, ID)
  // psql prints an empty value as an empty line, which sql() drops: the id keeps the row
  const rows = cluster.sql(`select id, coalesce(node_id, '') from sandbox where id = '${id}'`)
  return rows.length === 0 ? undefined : (rows[0][1] || null)
}

/** The container ids runc knows on a node (its own state root), running or not. */
export function containersOf(node) {
  try {
    return execFileSync('runc', ['--root', `${node.runDir}/runc`, 'list', '-q'], { stdio: 'pipe' }).toString().split('\n').filter(Boolean)
  } catch {
    return []
  }
}

/** The sandbox ids whose container (its own, or the warm-pool member it claimed) runc knows on a node. */
export function sandboxesOn(node, ids) {
  const containers = containersOf(node)
  const claimsDir = join(node.home, 'backend', 'container', 'claims')
  const claims = new Map(existsSync(claimsDir)
    ? readdirSync(claimsDir).filter((f) => !f.startsWith('.')).map((f) => [f, readFileSync(join(claimsDir, f), 'utf8').trim()])
    : [])
  return ids.filter((id) => containers.some((c) => c.endsWith(id) || c === claims.get(id)))
}

/**
 * No sandbox owned twice, none lost unless allowed: every RUNNING record's sandbox has a container on its owner and on
 * no other node, every container of a recorded sandbox is on the node its record names, and lost_sandbox holds
 * nothing but {@code allowedLost}.
 */
export function assertOwnedOnce(cluster, { nodes = cluster.nodes, allowedLost = [] } = {}) {
  const records = new Map(cluster.sql('select id, state, coalesce(node_id, \'\') from sandbox').map(([id, state, node]) => [id, { state, node }]))
  const holders = new Map()
  for (const node of nodes) {
    for (const id of sandboxesOn(node, [...records.keys()])) holders.set(id, [...(holders.get(id) ?? []), node.id])
  }
  for (const [id, { state, node }] of records) {
    const on = [...new Set(holders.get(id) ?? [])]
    if (state === 'RUNNING') assert.deepEqual(on, [node], `running sandbox ${id} (owner ${node}) has containers on ${JSON.stringify(on)}`)
    else assert.ok(on.every((n) => n === node), `sandbox ${id} (${state}, owner ${node}) has containers on ${JSON.stringify(on)}`)
  }
  const lost = cluster.sql('select id from lost_sandbox').map(([id]) => id)
  assert.deepEqual(lost.filter((id) => !allowedLost.includes(id)), [], 'sandboxes lost')
}
