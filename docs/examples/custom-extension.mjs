// A small custom extension for AgentENV (see docs/custom-extension.md): plain Node, no dependencies.
//
//   node docs/examples/custom-extension.mjs            # listens on 127.0.0.1:8377
//   AENV_CUSTOM_EXTENSION_URL=http://127.0.0.1:8377 java ... io.agentenv.server.Main
//
// What it does, to show the contract rather than a real VPN:
// - accepts one param, `vpn` ({"region": "eu" | "us"} or null); anything else is refused with 422 and a reason,
//   which the API caller sees as 400 with this body in the message;
// - start-fresh answers extraBootArgs "vpn.region=<region>" when a VPN is asked for;
// - patch-params merges the patch into the sandbox's current params (a null value removes the key) and answers the
//   full new params;
// - stop ignores a stop whose instance id is not the newest one it saw for that sandbox (stops can arrive late);
// - `maintenance = true` makes every hook answer 503 (the API caller sees 502).
import { createServer } from 'node:http'
import { pathToFileURL } from 'node:url'

const REGIONS = new Set(['eu', 'us'])

export function createExtension({ log = () => {} } = {}) {
  const sandboxes = new Map() // sandboxId -> { instanceId, params, running }
  const events = [] // every hook call, for tests and curiosity
  const state = { maintenance: false, sandboxes, events }

  function checkParams(params) {
    for (const [key, value] of Object.entries(params)) {
      if (key !== 'vpn') return `unknown param '${key}'`
      if (value !== null && !(typeof value === 'object' && REGIONS.has(value.region))) {
        return `vpn.region must be one of ${[...REGIONS].join(', ')}`
      }
    }
    return null
  }

  const hooks = {
    'start-fresh': (body) => start(body, true),
    'start-resume': (body) => start(body, false),
    'patch-params': ({ sandboxId, patch }) => {
      const current = sandboxes.get(sandboxId)?.params ?? {}
      const next = { ...current }
      for (const [key, value] of Object.entries(patch)) {
        if (value === null) delete next[key]
        else next[key] = value
      }
      const problem = checkParams(next)
      if (problem) return [422, { error: problem }]
      const entry = sandboxes.get(sandboxId) ?? { instanceId: null, running: false }
      sandboxes.set(sandboxId, { ...entry, params: next })
      return [200, { customExtensionParams: next }]
    },
    stop: ({ sandboxId, sandboxInstanceId }) => {
      const entry = sandboxes.get(sandboxId)
      if (entry && entry.instanceId === sandboxInstanceId) entry.running = false // else: a stale stop, ignored
      return [200, {}]
    },
  }

  function start({ sandboxId, sandboxInstanceId, networkNamespacePath, hostInteractionIp, customExtensionParams }, fresh) {
    const problem = checkParams(customExtensionParams)
    if (problem) return [422, { error: problem }]
    // a real extension would enter networkNamespacePath here and bring up the tunnel for hostInteractionIp
    sandboxes.set(sandboxId, { instanceId: sandboxInstanceId, params: customExtensionParams, running: true })
    const region = customExtensionParams.vpn?.region
    return [200, fresh && region ? { extraBootArgs: `vpn.region=${region}` } : {}]
  }

  const server = createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => { raw += chunk })
    req.on('end', () => {
      const name = req.url.replace(/^.*\/sandbox-hook\//, '')
      const hook = req.method === 'POST' && req.url.includes('/sandbox-hook/') ? hooks[name] : undefined
      let status = 404
      let answer = { error: `no hook ${name}` }
      if (hook) {
        try {
          const body = JSON.parse(raw)
          events.push({ hook: name, body })
          ;[status, answer] = state.maintenance ? [503, { error: 'extension in maintenance' }] : hook(body)
        } catch (e) {
          ;[status, answer] = [400, { error: `bad request: ${e.message}` }]
        }
      }
      log(`${name} -> ${status}`)
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer))
    })
  })
  return { server, state }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const port = Number(process.env.PORT ?? 8377)
  const { server } = createExtension({ log: console.log })
  server.listen(port, '127.0.0.1', () => console.log(`custom extension listening on http://127.0.0.1:${port}`))
}
