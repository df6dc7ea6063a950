// The Connect envelope framing the terminal's stream reader relies on, at every chunk boundary.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { envelope, EnvelopeReader, toBase64, fromBase64 } from '../src/connect.js'

test('an envelope is flags, a big-endian length and the JSON', () => {
  const e = envelope({ a: 1 }, 2)
  assert.equal(e[0], 2)
  assert.equal(new DataView(e.buffer).getUint32(1, false), 7)
  assert.equal(new TextDecoder().decode(e.subarray(5)), '{"a":1}')
})

test('envelopes split across chunks at every byte come out whole and in order', () => {
  const stream = new Uint8Array([...envelope({ event: { start: { pid: 7 } } }), ...envelope({ n: 'é' }), ...envelope({}, 2)])
  for (let cut = 0; cut <= stream.length; cut++) {
    const reader = new EnvelopeReader()
    const got = [...reader.push(stream.subarray(0, cut)), ...reader.push(stream.subarray(cut))]
    assert.deepEqual(got, [
      { flags: 0, message: { event: { start: { pid: 7 } } } },
      { flags: 0, message: { n: 'é' } },
      { flags: 2, message: {} },
    ])
    assert.equal(reader.pending, 0)
  }
})

test('an incomplete envelope waits for the rest', () => {
  const reader = new EnvelopeReader()
  const e = envelope({ x: 'y' })
  assert.deepEqual(reader.push(e.subarray(0, 6)), [])
  assert.equal(reader.pending, 6)
  assert.deepEqual(reader.push(e.subarray(6)), [{ flags: 0, message: { x: 'y' } }])
})

test('base64 round-trips bytes of every value', () => {
  const bytes = new Uint8Array(256).map((_, i) => i)
  assert.deepEqual(fromBase64(toBase64(bytes)), bytes)
  assert.equal(toBase64(new TextEncoder().encode('echo hi\r')), 'ZWNobyBoaQ0=')
})
