#!/usr/bin/env python3
"""Means by variant of what server-ab.sh + sdk-wire.mjs printed: the server JVM's CPU per burst and by thread.

  bench/container/ab-summary.py <server-ab output>...
Per variant, for the first burst after a server start (round 1: C1 still compiles what the training left out) and for
the later ones apart: the bursts counted, the server JVM's CPU per burst (mean and median; /proc's 10 ms ticks), the
sum of its threads' schedstat (ns; where sdk-wire printed it) and their means by name, the SDK's Node CPU and the TTI p95 (load-sensitive: context only).
"""
import collections
import re
import statistics
import sys

runs = collections.defaultdict(list)  # (variant, first?) -> [burst dicts]
variant = None
for path in sys.argv[1:]:
    for line in open(path, errors='replace'):
        m = re.match(r'=== alternation \d+, variant (\S+)', line)
        if m:
            variant = m.group(1)
            continue
        m = re.match(r'round (\d+): load ([\d.]+).*?p95 ([\d.]+).*?SDK Node CPU ([\d.]+) ms.*?server JVM (\d+) ms(?: \(threads ([\d.]+)\))?: (.*)$', line)
        if not m or variant is None:
            continue
        threads = {}
        for part in m.group(7).split(', '):
            name, _, ms = part.rpartition(' ')
            threads[name] = float(ms)
        runs[(variant, m.group(1) == '1')].append({'load': float(m.group(2)), 'p95': float(m.group(3)),
                                                   'node': float(m.group(4)), 'server': float(m.group(5)),
                                                   'threads_ms': float(m.group(6)) if m.group(6) else None,
                                                   'threads': threads})

for first in (True, False):
    print('first burst after a start' if first else 'later bursts')
    for (name, is_first), bursts in sorted(runs.items()):
        if is_first != first:
            continue
        server = [b['server'] for b in bursts]
        names = collections.Counter()
        for b in bursts:
            names.update(b['threads'].keys())
        top = sorted(names, key=lambda n: -sum(b['threads'].get(n, 0) for b in bursts))[:6]
        sums = [b['threads_ms'] for b in bursts if b['threads_ms'] is not None]
        summed = f"threads' sum mean {statistics.mean(sums):6.1f} ms, " if sums else ''
        by_thread = ', '.join(f"{n} {statistics.mean(b['threads'].get(n, 0) for b in bursts):.1f}" for n in top)
        print(f"  {name:10s} n={len(bursts):2d} server JVM mean {statistics.mean(server):6.1f} median "
              f"{statistics.median(server):5.0f} ms; {summed}by thread: {by_thread}; SDK Node {statistics.mean(b['node'] for b in bursts):.1f}; "
              f"p95 {statistics.mean(b['p95'] for b in bursts):.1f}; load {min(b['load'] for b in bursts):.2f}-"
              f"{max(b['load'] for b in bursts):.2f}")
