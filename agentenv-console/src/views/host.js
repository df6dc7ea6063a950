// The host (GET /host): server version and uptime, sandboxes, slots, the warm pool per template, CPU and memory.
import { useState } from 'preact/hooks'
import { html } from '../html.js'
import { api } from '../api.js'
import { bytes, duration } from '../format.js'
import { usePolling } from './sandboxes.js'

export function Host() {
  const [host, setHost] = useState(null)
  const [error, setError] = useState(null)
  usePolling(async () => {
    try {
      setHost(await api('/host'))
      setError(null)
    } catch (e) {
      setError(e.message)
    }
  }, 2000)

  if (!host) return html`<section><h2>Host</h2>${error ? html`<p class="error" role="alert">${error}</p>` : html`<p class="muted">loading…</p>`}</section>`
  const m = host.machine
  const used = m.memTotal - m.memFree
  return html`
    <section>
      <h2>Host</h2>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <dl class="facts" data-testid="host-facts">
        <dt>Server version</dt><dd data-testid="host-version">${host.version}</dd>
        <dt>Backend</dt><dd>${host.backend}</dd>
        <dt>Up</dt><dd>${duration(host.uptimeSeconds * 1000)} (since ${new Date(host.startedAt).toLocaleString()})</dd>
        <dt>Sandboxes</dt><dd>${host.sandboxes.running} running, ${host.sandboxes.paused} paused</dd>
        <dt>Sandbox slots</dt><dd data-testid="host-slots">${host.slots
          ? `${host.slots.used} used${host.slots.total === null ? '' : ` of ${host.slots.total}`}`
          : 'not counted by this backend'}</dd>
        <dt>CPU</dt><dd>${m.cpuCount} cores${m.cpuLoad === null ? '' : `, ${(100 * m.cpuLoad).toFixed(0)} % busy`}${m.loadAverage === null ? '' : `, load ${m.loadAverage.toFixed(2)}`}</dd>
        <dt>Memory</dt><dd>${bytes(used)} used of ${bytes(m.memTotal)} (${bytes(m.memFree)} available)</dd>
      </dl>
      <h3>Warm pool</h3>
      <table class="list" data-testid="pool-table">
        <thead><tr><th>Template</th><th>Ready</th><th>Target</th></tr></thead>
        <tbody>${host.warmPool.map((p) => html`<tr><td>${p.templateID}</td><td>${p.ready}</td><td>${p.target}</td></tr>`)}</tbody>
      </table>
      ${!host.warmPool.length && html`<p class="muted">No template is kept warm.</p>`}
    </section>`
}
