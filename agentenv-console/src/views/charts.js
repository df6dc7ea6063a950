// CPU, memory and disk over time from the sampled metrics route (GET /sandboxes/{id}/metrics), drawn by uPlot.
import { useEffect, useRef, useState } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { html } from '../html.js'
import { sandboxes } from '../api.js'
import { usePolling } from './sandboxes.js'

const MIB = 1024 * 1024

const SERIES = {
  cpu: { title: 'CPU', unit: '%', lines: [['used %', (m) => m.cpuUsedPct]] },
  memory: { title: 'Memory', unit: 'MiB', lines: [['used', (m) => m.memUsed / MIB], ['total', (m) => m.memTotal / MIB]] },
  disk: { title: 'Disk', unit: 'MiB', lines: [['used', (m) => m.diskUsed / MIB], ['total', (m) => m.diskTotal / MIB]] },
}
const COLORS = ['#2f7de1', '#9aa5b1']

export function Charts({ id }) {
  const [metrics, setMetrics] = useState([])
  const [error, setError] = useState(null)
  usePolling(async () => {
    try {
      setMetrics(await sandboxes.metrics(id))
      setError(null)
    } catch (e) {
      setError(e.message)
    }
  }, 5000, [id])

  return html`
    <div class="charts">
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <p class="muted" data-testid="sample-count">${metrics.length} samples</p>
      ${Object.entries(SERIES).map(([name, spec]) => html`<${Chart} key=${name} name=${name} spec=${spec} metrics=${metrics} />`)}
    </div>`
}

function Chart({ name, spec, metrics }) {
  const box = useRef(null)
  const plot = useRef(null)

  // x in seconds (with the fraction the RFC 3339 timestamp may carry); uPlot wants x strictly ascending, so of samples
  // at the same time the last one is kept
  const points = metrics.map((m) => [Date.parse(m.timestamp) / 1000, m])
    .sort((a, b) => a[0] - b[0])
    .filter((p, i, all) => i === all.length - 1 || all[i + 1][0] !== p[0])
  const data = [points.map(([x]) => x), ...spec.lines.map(([, f]) => points.map(([, m]) => f(m)))]

  useEffect(() => {
    const width = Math.max(300, box.current.clientWidth || 600)
    plot.current = new uPlot({
      title: `${spec.title} (${spec.unit})`,
      width,
      height: 180,
      series: [{}, ...spec.lines.map(([label], i) => ({ label, stroke: COLORS[i], width: 1.5 }))],
      axes: [{}, { size: 60 }],
      scales: name === 'cpu' ? { y: { range: [0, 100] } } : {},
    }, data, box.current)
    const onResize = () => plot.current.setSize({ width: Math.max(300, box.current.clientWidth), height: 180 })
    addEventListener('resize', onResize)
    return () => {
      removeEventListener('resize', onResize)
      plot.current.destroy()
    }
  }, [])

  useEffect(() => {
    plot.current?.setData(data)
  }, [metrics])

  return html`<div class="chart" data-testid=${`chart-${name}`} ref=${box}></div>`
}
