// A terminal in the sandbox: xterm.js over envd's PTY (process.Process/Start with a pty, SendInput, Update for
// resize) through the sandbox proxy. Copy with Ctrl+Shift+C or the button, paste with Ctrl+Shift+V / the browser's
// paste or the button. When the stream is cut (the sandbox paused) it reattaches to the same shell once the sandbox
// runs again, or starts a new one when that shell is gone. Loaded on demand (its own chunk).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { Terminal as XTerm } from '@xterm/xterm'
import { FitAddon } from '@xterm/addon-fit'
import '@xterm/xterm/css/xterm.css'
import { html } from '../html.js'
import { Envd } from '../envd.js'
import { routeStyleElementsThroughCssom } from './csp-styles.js'

const encoder = new TextEncoder()

export function Terminal({ id, state }) {
  const envd = useMemo(() => new Envd(id), [id])
  const box = useRef(null)
  const term = useRef(null)
  const session = useRef({ pid: undefined, abort: null, queue: Promise.resolve() })
  const [status, setStatus] = useState('connecting')
  const [error, setError] = useState(null)

  const connect = async (reattach) => {
    const s = session.current
    s.abort?.abort()
    const abort = new AbortController()
    s.abort = abort
    setStatus('connecting')
    setError(null)
    const t = term.current
    const attach = (pid) => envd.pty({
      cols: t.cols, rows: t.rows, pid, signal: abort.signal,
      onStart: (started) => {
        s.pid = started
        setStatus('connected')
        envd.resize(started, t.cols, t.rows).catch(() => {})
      },
      onData: (bytes) => t.write(bytes),
    })
    try {
      if (reattach && s.pid !== undefined) {
        try {
          await attach(s.pid)
        } catch (e) {
          if (abort.signal.aborted || e.code !== 'not_found') throw e
          s.pid = undefined
          t.write('\r\n[the previous shell is gone: starting a new one]\r\n')
          await attach(undefined)
        }
      } else {
        await attach(undefined)
      }
      if (!abort.signal.aborted) {
        s.pid = undefined
        setStatus('ended')
      }
    } catch (e) {
      if (abort.signal.aborted) return
      setStatus('disconnected')
      setError(e.message)
    }
  }

  useEffect(() => {
    routeStyleElementsThroughCssom()
    // a steady cursor: xterm's DOM renderer blinks it with an endless CSS animation, which makes the page draw a frame
    // every 16.7 ms while the tab is open, and every keystroke's echo then waits behind a frame to be read and another
    // to be drawn (+16 ms measured by bench/console/terminal.mjs)
    const t = new XTerm({ cursorBlink: false, fontSize: 13, scrollback: 5000, convertEol: false })
    const fit = new FitAddon()
    t.loadAddon(fit)
    t.open(box.current)
    fit.fit()
    term.current = t
    const s = session.current
    t.onData((data) => {
      if (s.pid === undefined) return
      const pid = s.pid
      s.queue = s.queue.then(() => envd.sendPty(pid, encoder.encode(data))).catch((e) => setError(e.message))
    })
    t.onResize(({ cols, rows }) => {
      if (s.pid !== undefined) envd.resize(s.pid, cols, rows).catch(() => {})
    })
    t.attachCustomKeyEventHandler((e) => {
      if (e.type === 'keydown' && e.ctrlKey && e.shiftKey && e.code === 'KeyC') {
        copy()
        return false
      }
      return true
    })
    const observer = new ResizeObserver(() => fit.fit())
    observer.observe(box.current)
    connect(false)
    t.focus()
    return () => {
      observer.disconnect()
      s.abort?.abort()
      t.dispose()
    }
  }, [id])

  // reattach once a paused sandbox runs again
  useEffect(() => {
    if (state === 'running' && status === 'disconnected') connect(true)
  }, [state, status])

  const copy = () => {
    const text = term.current?.getSelection()
    if (text) navigator.clipboard?.writeText(text).catch((e) => setError(e.message))
  }
  const paste = async () => {
    try {
      const text = await navigator.clipboard.readText()
      if (text) term.current.paste(text)
    } catch (e) {
      setError(e.message)
    }
    term.current?.focus()
  }

  return html`
    <div>
      <div class="inline">
        <span class=${`term-status ${status}`} data-testid="terminal-status">${status}</span>
        <button onClick=${copy}>Copy</button>
        <button onClick=${paste}>Paste</button>
        <button data-testid="terminal-reconnect" onClick=${() => connect(true)}>Reconnect</button>
        <button onClick=${() => connect(false)}>New shell</button>
        ${status === 'disconnected' && state !== 'running' && html`<span class="muted">reconnects when the sandbox runs again</span>`}
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <div class="terminal" ref=${box} data-testid="terminal"></div>
    </div>`
}
