// One GET /health to a local envd (or the floor server) over a fresh TCP connection, for start-up benches.
import net from 'node:net'

/** The status code of one GET /health on 127.0.0.1:{@code port}; 0 when nothing answers (not listening yet). */
export function healthStatus(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port, noDelay: true })
    let text = ''
    socket.on('connect', () => socket.write('GET /health HTTP/1.1\r\nHost: envd\r\nConnection: close\r\n\r\n'))
    socket.on('data', (d) => { text += d })
    socket.on('error', () => resolve(0))
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0)))
  })
}
