// A sandbox's logs (GET /v2/sandboxes/{id}/logs, oldest first); with follow on, new entries are fetched every 2 s and
// the view stays at the bottom. Every line is text.
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { sandboxes } from '../api.js'
import { usePolling } from './sandboxes.js'

const KEEP = 5000

export function Logs({ id }) {
  const [entries, setEntries] = useState([])
  const [follow, setFollow] = useState(true)
  const [error, setError] = useState(null)
  const cursor = useRef(undefined)
  const box = useRef(null)

  usePolling(async () => {
    if (!follow && cursor.current !== undefined) return
    try {
      const { logs } = await sandboxes.logs(id, cursor.current)
      if (logs.length) {
        const last = Date.parse(logs[logs.length - 1].timestamp)
        cursor.current = last + 1
        setEntries((old) => [...old, ...logs].slice(-KEEP))
      }
      setError(null)
    } catch (e) {
      setError(e.message)
    }
  }, 2000, [id, follow])

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight
  }, [entries, follow])

  return html`
    <div>
      <label class="inline"><input type="checkbox" data-testid="follow" checked=${follow}
        onChange=${(e) => setFollow(e.currentTarget.checked)} /> Follow</label>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <div class="logs mono" ref=${box} data-testid="logs">
        ${entries.map((e) => html`<div class=${`log ${e.level}`}><span class="muted">${e.timestamp}</span> <b>${e.level}</b> ${e.message}</div>`)}
      </div>
    </div>`
}
