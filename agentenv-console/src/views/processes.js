// The processes envd started in a sandbox (process.Process/List through the proxy), refreshed every 3 s; kill sends
// SIGKILL after a confirmation.
import { useMemo, useState } from 'preact/hooks'
import { html } from '../html.js'
import { Envd } from '../envd.js'
import { usePolling } from './sandboxes.js'

export function Processes({ id, running }) {
  const envd = useMemo(() => new Envd(id), [id])
  const [list, setList] = useState(null)
  const [error, setError] = useState(null)
  const [confirm, setConfirm] = useState(null)

  const load = async () => {
    if (!running) return
    try {
      setList(await envd.processes())
      setError(null)
    } catch (e) {
      setError(e.message)
    }
  }
  usePolling(load, 3000, [id, running])

  const kill = async (pid) => {
    setConfirm(null)
    try {
      await envd.kill(pid)
    } catch (e) {
      setError(e.message)
    }
    load()
  }

  if (!running) return html`<p class="muted">The sandbox is not running: resume it to see its processes.</p>`
  return html`
    <div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${confirm !== null && html`<p class="confirm" role="alertdialog">Kill process ${confirm} (SIGKILL)?
        <button class="danger" data-testid="confirm-kill-process" onClick=${() => kill(confirm)}>Kill</button>
        <button onClick=${() => setConfirm(null)}>Cancel</button></p>`}
      <table class="list" data-testid="process-table">
        <thead><tr><th>PID</th><th>Command</th><th>Tag</th><th></th></tr></thead>
        <tbody>${(list ?? []).map((p) => html`
          <tr data-testid="process-row">
            <td>${p.pid}</td>
            <td class="mono">${[p.config?.cmd, ...(p.config?.args ?? [])].join(' ')}</td>
            <td>${p.tag ?? ''}</td>
            <td><button class="danger" onClick=${() => setConfirm(p.pid)}>Kill</button></td>
          </tr>`)}</tbody>
      </table>
      ${list && !list.length && html`<p class="muted">No processes started through envd.</p>`}
    </div>`
}
