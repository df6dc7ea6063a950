// Preact with htm's tagged templates instead of JSX: no compile step of its own, and values interpolated into
// ${...} are always text or props, never parsed as markup (sandbox-controlled text stays text).
import { h } from 'preact'
import htm from 'htm'

export const html = htm.bind(h)
