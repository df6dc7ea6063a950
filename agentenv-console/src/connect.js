// Connect's JSON codec over fetch: unary calls (a plain JSON body) and server streams, whose body is a sequence of
// envelopes: one flags byte (0x02 = end of stream) and a big-endian uint32 length, then that many bytes of JSON.

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** One envelope holding {@code message} as JSON. */
export function envelope(message, flags = 0) {
  const json = encoder.encode(JSON.stringify(message))
  const out = new Uint8Array(5 + json.length)
  out[0] = flags
  new DataView(out.buffer).setUint32(1, json.length, false)
  out.set(json, 5)
  return out
}

/**
 * Splits a byte stream into envelopes, whatever the chunk boundaries: push() each chunk, get the complete envelopes
 * ({flags, message}) it finished.
 */
export class EnvelopeReader {
  constructor() {
    this.buffer = new Uint8Array(0)
  }

  push(chunk) {
    const joined = new Uint8Array(this.buffer.length + chunk.length)
    joined.set(this.buffer)
    joined.set(chunk, this.buffer.length)
    const out = []
    let at = 0
    while (joined.length - at >= 5) {
      const length = new DataView(joined.buffer, joined.byteOffset + at + 1, 4).getUint32(0, false)
      if (joined.length - at - 5 < length) break
      const flags = joined[at]
      const text = decoder.decode(joined.subarray(at + 5, at + 5 + length))
      out.push({ flags, message: text.length ? JSON.parse(text) : {} })
      at += 5 + length
    }
    this.buffer = joined.slice(at)
    return out
  }

  /** Bytes of an envelope that has not fully arrived. */
  get pending() {
    return this.buffer.length
  }
}

/** Bytes as proto3 JSON's base64. */
export function toBase64(bytes) {
  let s = ''
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}

export function fromBase64(text) {
  const s = atob(text)
  const out = new Uint8Array(s.length)
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i)
  return out
}

export class ConnectError extends Error {
  constructor(code, message) {
    super(message)
    this.code = code
  }
}

async function connectErrorOf(res) {
  let code = `http_${res.status}`
  let message = `${res.status} ${res.statusText}`
  try {
    const body = await res.json()
    if (body?.code) code = body.code
    if (typeof body?.message === 'string') message = body.message
  } catch { /* not JSON */ }
  return new ConnectError(code, message)
}

/** A unary Connect call with the JSON codec. */
export async function unary(path, message, headers, { signal } = {}) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1' },
    body: JSON.stringify(message),
    credentials: 'omit',
    cache: 'no-store',
    signal,
  })
  if (!res.ok) throw await connectErrorOf(res)
  return res.json()
}

/**
 * A server-streaming Connect call: calls onMessage for each message; resolves when the stream ends cleanly, rejects
 * with the end-of-stream error, a transport failure or the abort.
 */
export async function serverStream(path, message, headers, onMessage, { signal, timeoutMs } = {}) {
  const extra = timeoutMs ? { 'Connect-Timeout-Ms': String(timeoutMs) } : {}
  const res = await fetch(path, {
    method: 'POST',
    headers: { ...headers, ...extra, 'Content-Type': 'application/connect+json', 'Connect-Protocol-Version': '1' },
    body: envelope(message),
    credentials: 'omit',
    cache: 'no-store',
    signal,
  })
  if (!res.ok) throw await connectErrorOf(res)
  const reader = res.body.getReader()
  const envelopes = new EnvelopeReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    for (const { flags, message: m } of envelopes.push(value)) {
      if (flags & 0x02) {
        if (m.error) throw new ConnectError(m.error.code, m.error.message ?? m.error.code)
        return
      }
      onMessage(m)
    }
  }
  throw new ConnectError('unavailable', 'the stream ended without its end message')
}
