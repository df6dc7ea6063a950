// The console's entry: sign-in, the navigation and the hash routes (#/sandboxes, #/sandboxes/<id>, #/templates,
// #/snapshots, #/host). Routes carry ids only; the API key never appears in a URL.
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { html } from './html.js'
import { session, onUnauthorized } from './api.js'
import { Login } from './views/login.js'
import { SandboxList } from './views/sandboxes.js'
import { SandboxDetail } from './views/sandbox.js'
import { Templates } from './views/templates.js'
import { Snapshots } from './views/snapshots.js'
import { Host } from './views/host.js'
import './style.css'

function currentRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent)
  return parts.length ? parts : ['sandboxes']
}

function App() {
  const [signedIn, setSignedIn] = useState(Boolean(session.key()))
  const [notice, setNotice] = useState(null)
  const [route, setRoute] = useState(currentRoute())

  useEffect(() => {
    const onHash = () => setRoute(currentRoute())
    addEventListener('hashchange', onHash)
    const off = onUnauthorized((message) => {
      session.signOut()
      setNotice(`Signed out: ${message}`)
      setSignedIn(false)
    })
    return () => {
      removeEventListener('hashchange', onHash)
      off()
    }
  }, [])

  if (!signedIn) return html`<${Login} notice=${notice} onSignedIn=${() => { setNotice(null); setSignedIn(true) }} />`

  const [section, id] = route
  let view
  if (section === 'sandboxes' && id) view = html`<${SandboxDetail} key=${id} id=${id} />`
  else if (section === 'templates') view = html`<${Templates} />`
  else if (section === 'snapshots') view = html`<${Snapshots} />`
  else if (section === 'host') view = html`<${Host} />`
  else view = html`<${SandboxList} />`

  const link = (name, label) => html`<a href=${`#/${name}`} class=${section === name ? 'active' : ''}>${label}</a>`
  return html`
    <header class="top">
      <span class="brand">AgentENV</span>
      <nav>${link('sandboxes', 'Sandboxes')}${link('templates', 'Templates')}${link('snapshots', 'Snapshots')}${link('host', 'Host')}</nav>
      <button class="link" data-testid="sign-out" onClick=${() => { session.signOut(); setSignedIn(false) }}>Sign out</button>
    </header>
    <main>${view}</main>`
}

render(html`<${App} />`, document.getElementById('app'))
