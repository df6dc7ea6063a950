// A file browser over envd (through the sandbox proxy): list a directory, open sub-directories, download, upload
// into the directory shown, delete (confirmed). File names are sandbox-controlled: rendered as text only.
import { useEffect, useMemo, useState } from 'preact/hooks'
import { html } from '../html.js'
import { Envd } from '../envd.js'
import { bytes } from '../format.js'

function parent(path) {
  const trimmed = path.replace(/\/+$/, '')
  const i = trimmed.lastIndexOf('/')
  return i <= 0 ? '/' : trimmed.slice(0, i)
}

function join(dir, name) {
  return `${dir.replace(/\/+$/, '')}/${name}`
}

export function Files({ id, running }) {
  const envd = useMemo(() => new Envd(id), [id])
  const [dir, setDir] = useState('/home/user')
  const [typed, setTyped] = useState('/home/user')
  const [entries, setEntries] = useState(null)
  const [error, setError] = useState(null)
  const [confirm, setConfirm] = useState(null)
  const [busy, setBusy] = useState(false)

  const load = async (path = dir) => {
    try {
      const list = await envd.listDir(path)
      list.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === 'FILE_TYPE_DIRECTORY' ? -1 : 1))
      setEntries(list)
      setError(null)
    } catch (e) {
      setEntries(null)
      setError(e.message)
    }
  }

  useEffect(() => {
    setTyped(dir)
    if (running) load(dir)
  }, [dir, running])

  const act = async (fn) => {
    setBusy(true)
    try {
      await fn()
      setError(null)
    } catch (e) {
      setError(e.message)
    } finally {
      setBusy(false)
      load()
    }
  }

  const download = (entry) => act(async () => {
    const blob = await envd.download(entry.path)
    const url = URL.createObjectURL(blob)
    const a = document.createElement('a')
    a.href = url
    a.download = entry.name
    a.click()
    setTimeout(() => URL.revokeObjectURL(url), 10_000)
  })

  const upload = (e) => {
    const files = [...e.currentTarget.files]
    e.currentTarget.value = ''
    act(async () => {
      for (const f of files) await envd.upload(join(dir, f.name), f)
    })
  }

  if (!running) return html`<p class="muted">The sandbox is not running: resume it to browse its files.</p>`
  return html`
    <div>
      <form class="inline" onSubmit=${(e) => { e.preventDefault(); setDir(typed.trim() || '/') }}>
        <button type="button" onClick=${() => setDir(parent(dir))} disabled=${dir === '/'}>Up</button>
        <input class="mono path" data-testid="files-path" value=${typed} onInput=${(e) => setTyped(e.currentTarget.value)} />
        <button type="submit">Open</button>
        <label class="button">Upload<input type="file" multiple data-testid="upload" class="hidden-input"
          disabled=${busy} onChange=${upload} /></label>
      </form>
      ${error && html`<p class="error" role="alert" data-testid="files-error">${error}</p>`}
      ${confirm && html`<p class="confirm" role="alertdialog">Delete ${confirm.path}?
        <button class="danger" data-testid="confirm-delete" onClick=${() => { const p = confirm.path; setConfirm(null); act(() => envd.remove(p)) }}>Delete</button>
        <button onClick=${() => setConfirm(null)}>Cancel</button></p>`}
      <table class="list" data-testid="files-table">
        <thead><tr><th>Name</th><th>Size</th><th>Permissions</th><th>Modified</th><th></th></tr></thead>
        <tbody>${(entries ?? []).map((e) => html`
          <tr data-testid="file-row" data-name=${e.name}>
            <td class="mono">${e.type === 'FILE_TYPE_DIRECTORY'
              ? html`<a href="#" onClick=${(ev) => { ev.preventDefault(); setDir(e.path) }}>${e.name}/</a>`
              : e.name}</td>
            <td>${e.type === 'FILE_TYPE_DIRECTORY' ? '' : bytes(Number(e.size ?? 0))}</td>
            <td class="mono">${e.permissions ?? ''}</td>
            <td>${e.modifiedTime ? new Date(e.modifiedTime).toLocaleString() : ''}</td>
            <td>${e.type !== 'FILE_TYPE_DIRECTORY' && html`<button onClick=${() => download(e)}>Download</button>`}
              <button class="danger" onClick=${() => setConfirm(e)}>Delete</button></td>
          </tr>`)}</tbody>
      </table>
    </div>`
}
