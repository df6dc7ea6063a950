// envd inside a sandbox, reached same-origin through the server's sandbox proxy: the routing headers
// E2b-Sandbox-Id / E2b-Sandbox-Port and the sandbox's envd token in X-Access-Token (from GET /sandboxes/{id}).
import { sandboxes, errorOf } from './api.js'
import { unary, serverStream, toBase64, fromBase64 } from './connect.js'

const ENVD_PORT = '49983'

/** The envd of one sandbox; the token is fetched (and cached) from the API. */
export class Envd {
  constructor(id) {
    this.id = id
    this.token = null
  }

  async headers() {
    if (this.token === null) {
      const detail = await sandboxes.get(this.id)
      this.token = detail.envdAccessToken ?? ''
    }
    const h = { 'E2b-Sandbox-Id': this.id, 'E2b-Sandbox-Port': ENVD_PORT }
    if (this.token) h['X-Access-Token'] = this.token
    return h
  }

  async unary(procedure, message) {
    return unary(`/${procedure}`, message, await this.headers())
  }

  // ---- files --------------------------------------------------------------------------------------------------

  async listDir(path) {
    const res = await this.unary('filesystem.Filesystem/ListDir', { path, depth: 1 })
    return res.entries ?? []
  }

  async remove(path) {
    await this.unary('filesystem.Filesystem/Remove', { path })
  }

  async download(path) {
    const res = await fetch(`/files?${new URLSearchParams({ path })}`,
      { headers: await this.headers(), credentials: 'omit', cache: 'no-store' })
    if (!res.ok) throw await errorOf(res)
    return res.blob()
  }

  async upload(path, file) {
    const form = new FormData()
    form.append('file', file, file.name)
    const res = await fetch(`/files?${new URLSearchParams({ path })}`,
      { method: 'POST', headers: await this.headers(), body: form, credentials: 'omit' })
    if (!res.ok) throw await errorOf(res)
    return res.json()
  }

  // ---- processes ----------------------------------------------------------------------------------------------

  async processes() {
    const res = await this.unary('process.Process/List', {})
    return res.processes ?? []
  }

  async kill(pid) {
    await this.unary('process.Process/SendSignal', { process: { pid }, signal: 'SIGNAL_SIGKILL' })
  }

  // ---- a terminal ---------------------------------------------------------------------------------------------

  /**
   * Starts a login shell on a pseudo-terminal (or, with {@code pid}, attaches to a running one); onData gets its output
   * as bytes, onStart its pid. Resolves when it ends.
   */
  async pty({ cols, rows, pid, onStart, onData, signal }) {
    const headers = { ...(await this.headers()), 'Keepalive-Ping-Interval': '50' }
    const onMessage = (m) => {
      const e = m.event ?? {}
      if (e.start) onStart(e.start.pid)
      else if (e.data?.pty) onData(fromBase64(e.data.pty))
    }
    if (pid !== undefined) {
      return serverStream('/process.Process/Connect', { process: { pid } }, headers, onMessage, { signal })
    }
    const envs = { TERM: 'xterm-256color', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' }
    return serverStream('/process.Process/Start',
      { process: { cmd: '/bin/bash', args: ['-i', '-l'], envs }, pty: { size: { cols, rows } } },
      headers, onMessage, { signal })
  }

  async sendPty(pid, bytes) {
    await this.unary('process.Process/SendInput', { process: { pid }, input: { pty: toBase64(bytes) } })
  }

  async resize(pid, cols, rows) {
    await this.unary('process.Process/Update', { process: { pid }, pty: { size: { cols, rows } } })
  }
}
