// The live list of sandboxes: polled every 1.5 s (GET /v2/sandboxes, every page), with the newest metrics every
// third poll for the CPU and memory sparklines; filters by state, template and metadata; actions per row.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { listSandboxes, latestMetrics } from '../api.js'
import { duration, metadataText } from '../format.js'
import { Sparkline } from './sparkline.js'
import { Actions } from './actions.js'

const POLL_MS = 1500
const HISTORY = 30

/** Recent CPU % and memory % per sandbox id, kept while the page is open. */
const history = new Map()

function record(metrics) {
  for (const [id, m] of Object.entries(metrics)) {
    const h = history.get(id) ?? { at: null, cpu: [], mem: [] }
    if (h.at === m.timestampUnix) continue
    h.at = m.timestampUnix
    h.cpu = [...h.cpu, m.cpuUsedPct].slice(-HISTORY)
    h.mem = [...h.mem, m.memTotal ? (100 * m.memUsed) / m.memTotal : 0].slice(-HISTORY)
    history.set(id, h)
  }
}

export function usePolling(fn, ms, deps = []) {
  useEffect(() => {
    let stopped = false
    let timer = null
    const tick = async () => {
      try {
        await fn()
      } finally {
        if (!stopped) timer = setTimeout(tick, ms)
      }
    }
    tick()
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }, deps)
}

export function SandboxList() {
  const [items, setItems] = useState(null)
  const [error, setError] = useState(null)
  const [now, setNow] = useState(Date.now())
  const [state, setState] = useState('')
  const [template, setTemplate] = useState('')
  const [meta, setMeta] = useState('')
  const [, setVersion] = useState(0)
  const polls = useRef(0)

  const refresh = async () => {
    try {
      const list = await listSandboxes()
      performance.mark('aenv:list-data', { detail: { rows: list.length } })
      setItems(list)
      setNow(Date.now())
      setError(null)
      if (polls.current++ % 3 === 0) {
        const running = list.filter((s) => s.state === 'running').map((s) => s.sandboxID)
        if (running.length) {
          record(await latestMetrics(running))
          setVersion((v) => v + 1)
        }
      }
    } catch (e) {
      setError(e.message)
    }
  }
  usePolling(refresh, POLL_MS)

  const templates = useMemo(() => [...new Set((items ?? []).map((s) => s.alias || s.templateID))].sort(), [items])
  const shown = useMemo(() => {
    const wanted = meta.trim().toLowerCase()
    return (items ?? []).filter((s) => (!state || s.state === state)
      && (!template || (s.alias || s.templateID) === template)
      && (!wanted || metadataText(s.metadata).toLowerCase().includes(wanted)))
  }, [items, state, template, meta])

  useEffect(() => {
    if (items) performance.mark('aenv:list-rendered', { detail: { rows: shown.length } })
  }, [items, shown])

  return html`
    <section>
      <div class="toolbar">
        <h2>Sandboxes</h2>
        <label>State <select data-testid="filter-state" value=${state} onChange=${(e) => setState(e.currentTarget.value)}>
          <option value="">all</option><option value="running">running</option><option value="paused">paused</option>
        </select></label>
        <label>Template <select data-testid="filter-template" value=${template} onChange=${(e) => setTemplate(e.currentTarget.value)}>
          <option value="">all</option>${templates.map((t) => html`<option value=${t}>${t}</option>`)}
        </select></label>
        <label>Metadata <input data-testid="filter-metadata" placeholder="key=value" value=${meta}
          onInput=${(e) => setMeta(e.currentTarget.value)} /></label>
        <span class="muted" data-testid="sandbox-count">${items ? `${shown.length} of ${items.length}` : 'loading…'}</span>
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <table class="list" data-testid="sandbox-table">
        <thead><tr><th>Sandbox</th><th>State</th><th>Template</th><th>Metadata</th><th>Age</th><th>Time left</th>
          <th>CPU</th><th>Memory</th><th>Actions</th></tr></thead>
        <tbody>${shown.map((s) => html`<${Row} key=${s.sandboxID} s=${s} now=${now} onDone=${refresh} />`)}</tbody>
      </table>
      ${items && !items.length && html`<p class="muted">No sandboxes. Create one with an E2B SDK, aenv or the REST API.</p>`}
    </section>`
}

function Row({ s, now, onDone }) {
  const h = history.get(s.sandboxID)
  return html`
    <tr data-testid="sandbox-row" data-id=${s.sandboxID} data-state=${s.state}>
      <td><a href=${`#/sandboxes/${encodeURIComponent(s.sandboxID)}`} class="mono">${s.sandboxID}</a></td>
      <td><span class=${`state ${s.state}`} data-testid="state">${s.state}</span></td>
      <td>${s.alias || s.templateID}</td>
      <td class="meta" data-testid="metadata">${metadataText(s.metadata)}</td>
      <td>${duration(now - Date.parse(s.startedAt))}</td>
      <td>${s.state === 'running' ? duration(Date.parse(s.endAt) - now) : '–'}</td>
      <td><${Sparkline} values=${h?.cpu ?? []} max=${100} label="CPU %" /></td>
      <td><${Sparkline} values=${h?.mem ?? []} max=${100} label="memory %" /></td>
      <td><${Actions} sandbox=${s} onDone=${onDone} compact=${true} /></td>
    </tr>`
}
