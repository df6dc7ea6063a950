#!/usr/bin/env python3
"""Starts a command (envd) and measures, with a poller that costs almost no CPU, when it first answers GET /health
with 204 and when its first process.Start (a /bin/true, the whole stream read) is answered.

    python3 bench/envd/ready-probe.py --port PORT [--poll-ms 1] [--no-start] -- java ... -jar agentenv-envd.jar ...

Why not node: a node poller (http.get or net.connect every 1 ms) costs ~0.3-0.4 ms of CPU per refused connect, 20-65 ms
in all until the 204, on the same 2 cores as the JVM it waits for; a refused connect here costs ~20 us. The clock starts
right before the fork of the command (python's own start-up is not counted).

Prints one JSON line when the 204 came ({"event": "ready", pid, readyMs, polls, probeCpuMs, envdCpuMs, threadsCpuMs}),
one when the first Start was answered ({"event": "firstStart", firstStartMs, ok}) and then waits until the command exits
(the caller stops it: SIGTERM to the pid; when this probe's stdin is a pipe, closing it kills the command too). Exit status: the command's.
"""
import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time


def health(port):
    """The status of one GET /health over a fresh connection, 0 when nothing listens yet."""
    with socket.socket() as s:
        try:
            s.connect(('127.0.0.1', port))
        except OSError:
            return 0
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(b'GET /health HTTP/1.1\r\nHost: envd\r\nConnection: close\r\n\r\n')
        answer = read_all(s)
    match = re.match(rb'HTTP/1\.1 (\d+)', answer)
    return int(match.group(1)) if match else 0


def read_all(s):
    chunks = []
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return b''.join(chunks)
        chunks.append(chunk)


def first_start(port):
    """process.Start of /bin/true, its whole stream read: True when the end event came with exit code 0."""
    body = json.dumps({'process': {'cmd': '/bin/true'}, 'stdin': False}).encode()
    frame = b'\0' + len(body).to_bytes(4, 'big') + body
    with socket.create_connection(('127.0.0.1', port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(b'POST /process.Process/Start HTTP/1.1\r\nHost: envd\r\nConnection: close\r\n'
                  b'Content-Type: application/connect+json\r\nContent-Length: %d\r\n\r\n' % len(frame) + frame)
        text = read_all(s)
    return b'"end":{' in text and re.search(rb'"exitCode":[1-9]', text) is None


def thread_cpu_ms(pid):
    """CPU time per thread name (numbers at the end dropped, so pools sum up), from schedstat (ns on a CPU)."""
    threads = {}
    for tid in os.listdir(f'/proc/{pid}/task'):
        try:
            with open(f'/proc/{pid}/task/{tid}/stat') as f:
                stat = f.read()
            with open(f'/proc/{pid}/task/{tid}/schedstat') as f:
                ns = int(f.read().split()[0])
        except OSError:
            continue  # the thread ended meanwhile
        name = re.sub(r'[-#]?\d+$', '', stat[stat.index('(') + 1:stat.rindex(')')])
        threads[name] = threads.get(name, 0) + ns / 1e6
    return threads


def emit(record):
    sys.stdout.write(json.dumps(record) + '\n')
    sys.stdout.flush()


def main():
    args = sys.argv[1:]
    if '--' not in args:
        raise SystemExit(__doc__)
    options, command = args[:args.index('--')], args[args.index('--') + 1:]
    port = int(options[options.index('--port') + 1])
    poll = float(options[options.index('--poll-ms') + 1]) / 1000 if '--poll-ms' in options else 0.001
    started = time.perf_counter()
    cpu_before = time.process_time()
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    if stat.S_ISFIFO(os.fstat(0).st_mode):  # started by a program: its end of the pipe closed stops the command too
        threading.Thread(target=lambda: (sys.stdin.read(), child.kill()), daemon=True).start()
    polls = 0
    while True:
        polls += 1
        if health(port) == 204:
            break
        if child.poll() is not None:
            emit({'event': 'exited', 'status': child.returncode})
            raise SystemExit(1)
        time.sleep(poll)
    ready = (time.perf_counter() - started) * 1000
    probe_cpu = (time.process_time() - cpu_before) * 1000
    threads = thread_cpu_ms(child.pid)
    emit({'event': 'ready', 'pid': child.pid, 'readyMs': round(ready, 2), 'polls': polls,
          'probeCpuMs': round(probe_cpu, 2), 'envdCpuMs': round(sum(threads.values()), 1),
          'threadsCpuMs': {k: round(v, 1) for k, v in sorted(threads.items(), key=lambda kv: -kv[1])}})
    if '--no-start' not in options:
        ok = first_start(port)
        emit({'event': 'firstStart', 'firstStartMs': round((time.perf_counter() - started) * 1000, 2), 'ok': ok})
    raise SystemExit(child.wait())


main()
