// The REST API as the console uses it. The API key lives in sessionStorage only and travels only in the X-API-Key
// header (never in a URL or a cookie). Errors carry the API's own words ({code, message}).

const KEY = 'aenv.apiKey'

export class ApiError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

export const session = {
  key: () => sessionStorage.getItem(KEY),
  signIn: (key) => sessionStorage.setItem(KEY, key),
  signOut: () => sessionStorage.removeItem(KEY),
}

const listeners = new Set()
/** Called with the message when the server refuses the key (401): the console signs out. */
export function onUnauthorized(fn) {
  listeners.add(fn)
  return () => listeners.delete(fn)
}

/** The API's {code, message} answer as an ApiError (or the status line when the body is not that). */
export async function errorOf(res) {
  let message = `${res.status} ${res.statusText}`
  try {
    const body = await res.json()
    if (body && typeof body.message === 'string') message = body.message
  } catch { /* not JSON */ }
  return new ApiError(res.status, message)
}

/** Sends a request to the API with the key; returns the parsed JSON (null for 204) and the response. */
export async function request(path, { method = 'GET', body, key = session.key(), signal } = {}) {
  const headers = { 'X-API-Key': key ?? '' }
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal,
    credentials: 'omit', cache: 'no-store' })
  if (!res.ok) {
    const error = await errorOf(res)
    if (res.status === 401 && key === session.key()) for (const fn of listeners) fn(error.message)
    throw error
  }
  const data = res.status === 204 ? null : await res.json()
  return { data, res }
}

export async function api(path, options) {
  return (await request(path, options)).data
}

/** Every sandbox in the given states, following X-Next-Token pages of 100. */
export async function listSandboxes({ states = ['running', 'paused'], signal } = {}) {
  const all = []
  let next = null
  do {
    const q = new URLSearchParams({ state: states.join(','), limit: '100' })
    if (next) q.set('nextToken', next)
    const { data, res } = await request(`/v2/sandboxes?${q}`, { signal })
    all.push(...data)
    next = res.headers.get('X-Next-Token')
  } while (next)
  return all
}

/** The newest metric of each sandbox, by id (batches of 100 ids). */
export async function latestMetrics(ids, { signal } = {}) {
  const out = {}
  for (let i = 0; i < ids.length; i += 100) {
    const q = new URLSearchParams({ sandbox_ids: ids.slice(i, i + 100).join(',') })
    const data = await api(`/sandboxes/metrics?${q}`, { signal })
    Object.assign(out, data.sandboxes)
  }
  return out
}

export const sandboxes = {
  get: (id) => api(`/sandboxes/${encodeURIComponent(id)}`),
  pause: (id) => api(`/sandboxes/${encodeURIComponent(id)}/pause`, { method: 'POST', body: {} }),
  resume: (id, timeout) => api(`/sandboxes/${encodeURIComponent(id)}/connect`, { method: 'POST', body: { timeout } }),
  kill: (id) => api(`/sandboxes/${encodeURIComponent(id)}`, { method: 'DELETE' }),
  setTimeout: (id, timeout) => api(`/sandboxes/${encodeURIComponent(id)}/timeout`, { method: 'POST', body: { timeout } }),
  snapshot: (id, name) => api(`/sandboxes/${encodeURIComponent(id)}/snapshots`, { method: 'POST', body: name ? { name } : {} }),
  fork: (id, count) => api(`/sandboxes/${encodeURIComponent(id)}/fork`, { method: 'POST', body: { count } }),
  metrics: (id, start) => api(`/sandboxes/${encodeURIComponent(id)}/metrics${start ? `?start=${start}` : ''}`),
  logs: (id, cursor) => {
    const q = new URLSearchParams({ direction: 'forward', limit: '1000' })
    if (cursor !== undefined) q.set('cursor', String(cursor))
    return api(`/v2/sandboxes/${encodeURIComponent(id)}/logs?${q}`)
  },
}
