// A small line of the last values (0..max): an SVG polyline, painted with the row like its text. A canvas per
// sparkline was a compositor layer of its own (two per row), each copied into a shared image on every commit and
// drawn as a quad of its own: ~40 % of the main thread's time per scrolled frame (bench/console/list.mjs).
import { html } from '../html.js'

const W = 80
const H = 20

/** The polyline's points for values 0..max (max 0: the largest value, at least 1) in a W x H box. */
export function points(values, max) {
  const top = max || Math.max(...values, 1)
  return values.map((v, i) => {
    const x = values.length === 1 ? W : (i / (values.length - 1)) * W
    const y = H - 1 - (Math.min(v, top) / top) * (H - 2)
    return `${+x.toFixed(1)},${+y.toFixed(1)}`
  }).join(' ')
}

export function Sparkline({ values, max, label }) {
  return html`<svg class="spark" width=${W} height=${H} viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${label}>
    ${values.length > 0 && html`<polyline points=${points(values, max)} fill="none" stroke="#2f7de1" stroke-width="1.5" />`}
  </svg>`
}
