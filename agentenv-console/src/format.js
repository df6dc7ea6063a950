// Numbers and times as the views show them.

export function duration(ms) {
  if (!Number.isFinite(ms)) return '–'
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m ${s % 60}s`
  const h = Math.floor(m / 60)
  if (h < 48) return `${h}h ${m % 60}m`
  return `${Math.floor(h / 24)}d ${h % 24}h`
}

export function bytes(n) {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–'
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  let v = n
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v >= 100 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`
}

export function percent(v) {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : `${v.toFixed(1)} %`
}

/** Metadata as one line of k=v pairs sorted by key (text; the views render it as text). */
export function metadataText(metadata) {
  return Object.entries(metadata ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join(' ')
}
