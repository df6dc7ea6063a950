// One sandbox: its details and actions, and tabs for metrics charts, logs, files, processes and a terminal.
import { useState } from 'preact/hooks'
import { lazy, Suspense } from 'preact/compat'
import { html } from '../html.js'
import { sandboxes } from '../api.js'
import { duration, metadataText } from '../format.js'
import { Actions } from './actions.js'
import { usePolling, timeLeft } from './sandboxes.js'
import { Charts } from './charts.js'
import { Logs } from './logs.js'
import { Files } from './files.js'
import { Processes } from './processes.js'

const Terminal = lazy(() => import('./terminal.js').then((m) => m.Terminal))

const TABS = [['metrics', 'Metrics'], ['logs', 'Logs'], ['files', 'Files'], ['processes', 'Processes'], ['terminal', 'Terminal']]

export function SandboxDetail({ id }) {
  const [detail, setDetail] = useState(null)
  const [error, setError] = useState(null)
  const [tab, setTab] = useState('metrics')

  const refresh = async () => {
    try {
      setDetail(await sandboxes.get(id))
      setError(null)
    } catch (e) {
      setError(e.message)
    }
  }
  usePolling(refresh, 1500, [id])

  const running = detail?.state === 'running'
  return html`
    <section>
      <p><a href="#/sandboxes">← Sandboxes</a></p>
      <h2 class="mono">${id}</h2>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${detail && html`
        <dl class="facts">
          <dt>State</dt><dd><span class=${`state ${detail.state}`} data-testid="detail-state">${detail.state}</span></dd>
          <dt>Template</dt><dd>${detail.alias || detail.templateID}</dd>
          <dt>Resources</dt><dd>${detail.cpuCount} CPU, ${detail.memoryMB} MiB memory, ${detail.diskSizeMB} MiB disk</dd>
          <dt>Started</dt><dd>${new Date(detail.startedAt).toLocaleString()} (${duration(Date.now() - Date.parse(detail.startedAt))} ago)</dd>
          <dt>Time left</dt><dd>${timeLeft(detail, Date.now())}</dd>
          <dt>Metadata</dt><dd class="meta" data-testid="detail-metadata">${metadataText(detail.metadata)}</dd>
        </dl>
        <${Actions} sandbox=${detail} onDone=${(what) => (what === 'kill' ? (location.hash = '#/sandboxes') : refresh())} />`}
      <div class="tabs" role="tablist">
        ${TABS.map(([name, label]) => html`<button role="tab" aria-selected=${tab === name} data-testid=${`tab-${name}`}
          class=${tab === name ? 'active' : ''} onClick=${() => setTab(name)}>${label}</button>`)}
      </div>
      <div class="tab">
        ${tab === 'metrics' && html`<${Charts} id=${id} />`}
        ${tab === 'logs' && html`<${Logs} id=${id} />`}
        ${tab === 'files' && html`<${Files} id=${id} running=${running} />`}
        ${tab === 'processes' && html`<${Processes} id=${id} running=${running} />`}
        ${tab === 'terminal' && html`<${Suspense} fallback=${html`<p class="muted">loading the terminal…</p>`}>
          <${Terminal} id=${id} state=${detail?.state} /><//>`}
      </div>
    </section>`
}
