// A sandbox's actions (pause, resume, extend timeout, snapshot, fork, kill), for a list row and the detail page.
// Kill asks for a confirmation, and so do pause (it cuts open streams) and fork; extend, snapshot and fork take their
// value inline. Failures are shown as the API words them.
import { useState } from 'preact/hooks'
import { html } from '../html.js'
import { sandboxes } from '../api.js'

const CONFIRM = {
  kill: 'Kill this sandbox? Its processes and files are gone for good.',
  pause: 'Pause this sandbox? Open terminals and streams are cut until it resumes.',
}
const CONFIRM_SHORT = { kill: 'Kill it for good?', pause: 'Pause it?' }

export function Actions({ sandbox, onDone, compact = false }) {
  const [mode, setMode] = useState(null) // null | 'kill' | 'pause' | 'timeout' | 'snapshot' | 'fork'
  const [value, setValue] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(null)
  const [result, setResult] = useState(null)
  const id = sandbox.sandboxID
  const running = sandbox.state === 'running'

  const run = async (what, fn) => {
    setBusy(true)
    setError(null)
    setResult(null)
    try {
      const out = await fn()
      setMode(null)
      setValue('')
      if (what === 'snapshot') setResult(`snapshot ${out.snapshotID}${out.names?.length ? ` (${out.names.join(', ')})` : ''}`)
      if (what === 'fork') {
        const ids = out.filter((r) => r.sandbox).map((r) => r.sandbox.sandboxID)
        const errors = out.filter((r) => r.error).map((r) => r.error.message ?? JSON.stringify(r.error))
        setResult(`forked: ${ids.join(', ') || 'none'}`)
        if (errors.length) setError(errors.join('; '))
      }
      onDone?.(what)
    } catch (e) {
      setError(e.message)
    } finally {
      setBusy(false)
    }
  }

  const open = (m, initial = '') => {
    setMode(m)
    setValue(initial)
    setError(null)
    setResult(null)
  }

  const perform = () => {
    switch (mode) {
      case 'kill': return run('kill', () => sandboxes.kill(id))
      case 'pause': return run('pause', () => sandboxes.pause(id))
      case 'timeout': return run('timeout', () => sandboxes.setTimeout(id, Number(value)))
      case 'snapshot': return run('snapshot', () => sandboxes.snapshot(id, value.trim()))
      case 'fork': return run('fork', () => sandboxes.fork(id, Number(value)))
    }
  }

  let pending = null
  if (mode === 'kill' || mode === 'pause') {
    pending = html`<span class="confirm" role="alertdialog">${(compact ? CONFIRM_SHORT : CONFIRM)[mode]}
      <button class="danger" data-testid=${`confirm-${mode}`} disabled=${busy} onClick=${perform}>${mode === 'kill' ? 'Kill' : 'Pause'}</button>
      <button onClick=${() => setMode(null)}>Cancel</button></span>`
  } else if (mode) {
    const label = { timeout: 'Timeout from now (s)', snapshot: 'Snapshot name (optional)', fork: 'Children' }[mode]
    pending = html`<form class="inline" onSubmit=${(e) => { e.preventDefault(); perform() }}>
      <label>${label} <input data-testid=${`${mode}-value`} value=${value} size="8"
        type=${mode === 'snapshot' ? 'text' : 'number'} min="1" onInput=${(e) => setValue(e.currentTarget.value)} /></label>
      <button type="submit" disabled=${busy}>${mode === 'fork' ? 'Fork' : 'Apply'}</button>
      <button type="button" onClick=${() => setMode(null)}>Cancel</button></form>`
  }

  return html`
    <div class=${compact ? 'actions compact' : 'actions'}>
      ${running
        ? html`<button data-testid="pause" disabled=${busy} onClick=${() => open('pause')}>Pause</button>`
        : html`<button data-testid="resume" disabled=${busy} onClick=${() => run('resume', () => sandboxes.resume(id, 300))}>Resume</button>`}
      <button data-testid="extend" disabled=${busy || !running} onClick=${() => open('timeout', '300')}>Timeout</button>
      <button data-testid="snapshot" disabled=${busy || !running} onClick=${() => open('snapshot')}>Snapshot</button>
      <button data-testid="fork" disabled=${busy || !running} onClick=${() => open('fork', '1')}>Fork</button>
      <button class="danger" data-testid="kill" disabled=${busy} onClick=${() => open('kill')}>Kill</button>
      ${pending}
      ${result && html`<span class="ok">${result}</span>`}
      ${error && html`<span class="error" role="alert" data-testid="action-error">${error}</span>`}
    </div>`
}
