// The live list of sandboxes: polled every 1.5 s (GET /v2/sandboxes, every page), with the newest metrics every
// third poll for the CPU and memory sparklines; filters by state, template and metadata; actions per row. Rows have
// one fixed height and only those near the viewport are rendered, so a poll of thousands of sandboxes re-renders a
// screenful. Each row is placed at its own offset in a box as tall as the whole list (not a table with spacer rows):
// a scroll adds and drops rows without moving or re-laying out the others, so only the rows that came into range are
// painted (with spacer rows Chromium rastered ~50 tiles per scrolled frame, with placed rows ~9). A row whose
// sandbox, clock and sparkline values are unchanged keeps its DOM as it is. An action's confirmation or form opens
// below its row, over the next ones, so that rows keep their height.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { listSandboxes, latestMetrics } from '../api.js'
import { duration, metadataText } from '../format.js'
import { Sparkline } from './sparkline.js'
import { Actions } from './actions.js'

const POLL_MS = 1500
const HISTORY = 30
/** Pixels per row (style.css: .list.sandboxes .rows > .row). */
const ROW_H = 36
/** Rows rendered above and below the viewport. */
const OVERSCAN = 15

/** The values of a sparkline without history: one array, so that it compares equal from render to render. */
const NONE = Object.freeze([])

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
  const [range, setRange] = useState({ start: 0, end: 60 })
  const polls = useRef(0)
  const body = useRef(null)

  useEffect(() => {
    const update = () => {
      if (!body.current) return
      const top = body.current.getBoundingClientRect().top
      const start = Math.max(0, Math.floor(-top / ROW_H) - OVERSCAN)
      const end = start + Math.ceil(innerHeight / ROW_H) + 2 * OVERSCAN
      setRange((r) => (r.start === start && r.end === end ? r : { start, end }))
    }
    update()
    addEventListener('scroll', update, { passive: true })
    addEventListener('resize', update)
    return () => {
      removeEventListener('scroll', update)
      removeEventListener('resize', update)
    }
  }, [])

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
  // the rows' onDone: one function for the page's life, so that a row's props change only with its data
  const latest = useRef(refresh)
  latest.current = refresh
  const done = useCallback((what) => latest.current(what), [])

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
      <div class="list sandboxes" role="table" data-testid="sandbox-table" aria-rowcount=${shown.length + 1}>
        <div class="row head" role="row"><span role="columnheader">Sandbox</span><span role="columnheader">State</span>
          <span role="columnheader">Template</span><span role="columnheader">Metadata</span><span role="columnheader">Age</span>
          <span role="columnheader">Time left</span><span role="columnheader">CPU</span><span role="columnheader">Memory</span>
          <span role="columnheader">Actions</span></div>
        <div class="rows" role="rowgroup" ref=${body} style=${{ height: `${shown.length * ROW_H}px` }}>
          ${shown.slice(range.start, range.end).map((s, i) => {
            const h = history.get(s.sandboxID)
            return html`<${Row} key=${s.sandboxID} at=${range.start + i} s=${s} now=${now} cpu=${h?.cpu ?? NONE}
              mem=${h?.mem ?? NONE} onDone=${done} />`
          })}
        </div>
      </div>
      ${items && !items.length && html`<p class="muted">No sandboxes. Create one with an E2B SDK, aenv or the REST API.</p>`}
    </section>`
}

/** Until the sandbox's timeout; the API answers an end a century away for a sandbox without one. */
export function timeLeft(s, now) {
  if (s.state !== 'running') return '–'
  const left = Date.parse(s.endAt) - now
  return left > 10 * 365 * 86_400_000 ? 'no timeout' : duration(left)
}

/** A row re-renders only when one of its props changed (Preact calls a function component with its instance). */
function Row(props) {
  this.shouldComponentUpdate = (next) => Object.keys(next).some((k) => next[k] !== props[k])
  return html`<${RowView} ...${props} />`
}

function RowView({ at, s, now, cpu, mem, onDone }) {
  return html`
    <div class="row" role="row" aria-rowindex=${at + 2} style=${{ top: `${at * ROW_H}px` }} data-testid="sandbox-row"
      data-id=${s.sandboxID} data-state=${s.state}>
      <span role="cell"><a href=${`#/sandboxes/${encodeURIComponent(s.sandboxID)}`} class="mono">${s.sandboxID}</a></span>
      <span role="cell"><span class=${`state ${s.state}`} data-testid="state">${s.state}</span></span>
      <span role="cell" class="clip">${s.alias || s.templateID}</span>
      <span role="cell" class="clip" data-testid="metadata" title=${metadataText(s.metadata)}>${metadataText(s.metadata)}</span>
      <span role="cell">${duration(now - Date.parse(s.startedAt))}</span>
      <span role="cell">${timeLeft(s, now)}</span>
      <span role="cell"><${Sparkline} values=${cpu} max=${100} label="CPU %" /></span>
      <span role="cell"><${Sparkline} values=${mem} max=${100} label="memory %" /></span>
      <span role="cell"><${Actions} sandbox=${s} onDone=${onDone} compact=${true} /></span>
    </div>`
}
