// Sign-in with the API key: checked against the API (GET /host) before it is kept in sessionStorage.
import { useState } from 'preact/hooks'
import { html } from '../html.js'
import { request, session } from '../api.js'

export function Login({ notice, onSignedIn }) {
  const [key, setKey] = useState('')
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)

  const submit = async (e) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      await request('/host', { key: key.trim() })
      session.signIn(key.trim())
      onSignedIn()
    } catch (err) {
      setError(err.status === 401 ? `Wrong API key: ${err.message}` : err.message)
    } finally {
      setBusy(false)
    }
  }

  return html`
    <div class="login">
      <h1>AgentENV console</h1>
      <form onSubmit=${submit}>
        <label for="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autocomplete="off" spellcheck="false" value=${key}
          onInput=${(e) => setKey(e.currentTarget.value)} />
        <button type="submit" disabled=${busy || !key.trim()}>Sign in</button>
      </form>
      <p class="hint">The key is kept in this tab only (sessionStorage) and sent as the X-API-Key header.</p>
      ${notice && html`<p class="error" role="alert">${notice}</p>`}
      ${error && html`<p class="error" role="alert" data-testid="login-error">${error}</p>`}
    </div>`
}
