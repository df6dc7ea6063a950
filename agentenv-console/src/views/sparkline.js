// A small line of the last values (0..max) on a canvas sized by CSS; drawn with the canvas API (no styles).
import { useEffect, useRef } from 'preact/hooks'
import { html } from '../html.js'

export function Sparkline({ values, max, label }) {
  const ref = useRef(null)
  useEffect(() => {
    const canvas = ref.current
    if (!canvas) return
    const w = canvas.width
    const hgt = canvas.height
    const ctx = canvas.getContext('2d')
    ctx.clearRect(0, 0, w, hgt)
    if (!values.length) return
    const top = max || Math.max(...values, 1)
    ctx.strokeStyle = '#2f7de1'
    ctx.lineWidth = 1.5
    ctx.beginPath()
    values.forEach((v, i) => {
      const x = values.length === 1 ? w : (i / (values.length - 1)) * w
      const y = hgt - 1 - (Math.min(v, top) / top) * (hgt - 2)
      if (i === 0) ctx.moveTo(x, y)
      else ctx.lineTo(x, y)
    })
    ctx.stroke()
  }, [values, max])
  return html`<canvas ref=${ref} class="spark" width="80" height="20" role="img" aria-label=${label}></canvas>`
}
