// Snapshots (GET /snapshots, every page): create a sandbox from one, delete one (confirmed).
import { useState } from 'preact/hooks'
import { html } from '../html.js'
import { api } from '../api.js'
import { usePolling } from './sandboxes.js'
import { allPages } from './templates.js'

export function Snapshots() {
  const [list, setList] = useState(null)
  const [error, setError] = useState(null)
  const [note, setNote] = useState(null)
  const [confirm, setConfirm] = useState(null)

  const load = async () => {
    try {
      setList(await allPages('/snapshots'))
      setError(null)
    } catch (e) {
      setError(e.message)
    }
  }
  usePolling(load, 5000)

  const act = async (fn) => {
    setNote(null)
    try {
      setNote(await fn())
      setError(null)
    } catch (e) {
      setError(e.message)
    }
    load()
  }
  const create = (s) => act(async () => {
    const sbx = await api('/v2/sandboxes', { method: 'POST', body: { templateID: s.snapshotID } })
    return html`created <a href=${`#/sandboxes/${encodeURIComponent(sbx.sandboxID)}`} class="mono">${sbx.sandboxID}</a>`
  })
  const remove = (s) => act(async () => {
    setConfirm(null)
    await api(`/templates/${encodeURIComponent(s.snapshotID)}`, { method: 'DELETE' })
    return `deleted ${s.snapshotID}`
  })

  return html`
    <section>
      <h2>Snapshots</h2>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${note && html`<p class="ok">${note}</p>`}
      ${confirm && html`<p class="confirm" role="alertdialog">Delete snapshot ${confirm.snapshotID}? Sandboxes can no longer be created from it.
        <button class="danger" onClick=${() => remove(confirm)}>Delete</button>
        <button onClick=${() => setConfirm(null)}>Cancel</button></p>`}
      <table class="list" data-testid="snapshot-table">
        <thead><tr><th>Snapshot</th><th>Names</th><th>CPU</th><th>Memory</th><th>Disk</th><th>Created</th><th></th></tr></thead>
        <tbody>${(list ?? []).map((s) => html`
          <tr data-testid="snapshot-row">
            <td class="mono">${s.snapshotID}</td>
            <td>${(s.names ?? []).join(', ')}</td>
            <td>${s.cpuCount}</td>
            <td>${s.memoryMB} MiB</td>
            <td>${s.diskSizeMB} MiB</td>
            <td>${s.createdAt ? new Date(s.createdAt).toLocaleString() : '–'}</td>
            <td><button onClick=${() => create(s)}>Create sandbox</button>
              <button class="danger" onClick=${() => setConfirm(s)}>Delete</button></td>
          </tr>`)}</tbody>
      </table>
      ${list && !list.length && html`<p class="muted">No snapshots. Take one from a running sandbox's actions.</p>`}
    </section>`
}
