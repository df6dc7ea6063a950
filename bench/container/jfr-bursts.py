#!/usr/bin/env python3
"""The server's CPU-time samples inside the bursts of sdk-wire.mjs, by frame.

Record the server with JFR's CPU-time sampler (JDK 25) and the bursts' windows, then read the recording:
  AENV_BACKEND_POOL_SIZE=20 AENV_BENCH_BURST_WINDOWS=/tmp/win.txt \
    BENCH_SERVER_JVM_EXTRA="-XX:StartFlightRecording:filename=/tmp/s.jfr,settings=profile,jdk.CPUTimeSample#enabled=true,jdk.CPUTimeSample#throttle=1ms" \
    node bench/container/sdk-wire.mjs 5 12000
  bench/container/jfr-bursts.py /tmp/s.jfr /tmp/win.txt [top=40] [frame-name-part]
Prints the samples' count inside the windows, then the top frames by self samples, by the first io.agentenv frame on
the stack (inclusive), and by thread. The sampler throttles (JFR reports lost samples), so read shares, not times.
"""
import collections
import datetime
import json
import os
import subprocess
import sys

jfr_file, windows_file = sys.argv[1], sys.argv[2]
top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
grep = sys.argv[4] if len(sys.argv) > 4 else None  # also print the stacks through a frame whose name contains this
jfr = os.path.join(os.environ.get('JAVA_HOME', '/usr/lib/jvm/temurin-25-jdk-amd64'), 'bin', 'jfr')
windows = [tuple(int(x) / 1000 for x in line.split(',')[:2]) for line in open(windows_file) if line.strip()]
out = subprocess.run([jfr, 'print', '--json', '--stack-depth', '64', '--events', 'jdk.CPUTimeSample', jfr_file],
                     check=True, capture_output=True, text=True).stdout
events = json.loads(out)['recording']['events']


def epoch(text):
    return datetime.datetime.fromisoformat(text.replace('Z', '+00:00')).timestamp()


def name(frame):
    m = frame['method']
    return f"{m['type']['name'].replace('/', '.')}.{m['name']}"


selfs, firsts, threads, stacks = collections.Counter(), collections.Counter(), collections.Counter(), collections.Counter()
inside = 0
for e in events:
    v = e['values']
    t = epoch(v['startTime'])
    if not any(a <= t <= b for a, b in windows):
        continue
    inside += 1
    frames = (v.get('stackTrace') or {}).get('frames') or []
    thread = (v.get('eventThread') or v.get('sampledThread') or {}).get('javaName') or '?'
    threads[''.join('#' if c.isdigit() else c for c in thread)] += 1
    if frames:
        selfs[name(frames[0])] += 1
    own = next((name(f) for f in frames if name(f).startswith('io.agentenv') and '$$' not in
                f['method']['type']['name']), '(no agentenv frame)')
    if grep and frames and any(grep in name(f) for f in frames):
        stacks[' < '.join(name(f).rsplit('.', 2)[-2] + '.' + name(f).rsplit('.', 1)[-1] for f in frames[:18])] += 1
    firsts[own] += 1
print(f'{inside} CPU-time samples inside {len(windows)} bursts ({len(events)} in the recording)')
for title, counter in (('self', selfs), ('innermost agentenv frame', firsts), ('thread', threads), (f'stack through {grep}', stacks)):
    print(f'-- by {title}')
    for k, n in counter.most_common(top):
        print(f'{n:6d} {100 * n / max(inside, 1):5.1f}% {k}')
