// The built-in templates (GET /v2/templates, every page).
import { useState } from 'preact/hooks'
import { html } from '../html.js'
import { request } from '../api.js'
import { usePolling } from './sandboxes.js'

export async function allPages(path) {
  const all = []
  let next = null
  do {
    const q = new URLSearchParams({ limit: '100' })
    if (next) q.set('nextToken', next)
    const { data, res } = await request(`${path}?${q}`)
    all.push(...data)
    next = res.headers.get('X-Next-Token')
  } while (next)
  return all
}

export function Templates() {
  const [list, setList] = useState(null)
  const [error, setError] = useState(null)
  usePolling(async () => {
    try {
      setList(await allPages('/v2/templates'))
      setError(null)
    } catch (e) {
      setError(e.message)
    }
  }, 10_000)

  return html`
    <section>
      <h2>Templates</h2>
      <p class="muted">Built-in templates come from the recipes under templates/; snapshots are listed under Snapshots.</p>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <table class="list" data-testid="template-table">
        <thead><tr><th>Template</th><th>Names</th><th>CPU</th><th>Memory</th><th>Disk</th><th>Built</th><th>Status</th></tr></thead>
        <tbody>${(list ?? []).map((t) => html`
          <tr data-testid="template-row">
            <td class="mono">${t.templateID}</td>
            <td>${(t.names ?? []).join(', ')}</td>
            <td>${t.cpuCount}</td>
            <td>${t.memoryMB} MiB</td>
            <td>${t.diskSizeMB} MiB</td>
            <td>${t.createdAt ? new Date(t.createdAt).toLocaleString() : '–'}</td>
            <td>${t.buildStatus}</td>
          </tr>`)}</tbody>
      </table>
    </section>`
}
