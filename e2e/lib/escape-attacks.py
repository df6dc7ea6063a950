#!/usr/bin/env python3
# The attacks of e2e/tests/security-escapes.test.mjs, run inside a sandbox (uploaded there, then run once as root and
# once as the default user): each tries one way out of the container and records what the kernel answered.
#
#   python3 escape-attacks.py FACTS.json  ->  one JSON object on stdout: {"uid": ..., "results": {"<attack>": {...}}}
#
# An outcome is "ok" when the attack's system call or write succeeded, else the errno's name ("EPERM", "EROFS", ...),
# or for connections "connected", "timeout", "refused" or "unreachable". The test asserts the outcomes; this script
# judges nothing. Facts (from the host): gateway, serverPort, sshPort, hostAddresses, hostNetworkGateway (or null),
# hostLoopbackPort, hostAbstractSocket, otherSandbox, otherSandboxPort, hostServerPid, markerPath.
# Needs only python3 (ctypes) and the x86-64 system call numbers below; changes nothing that outlives the sandbox.
import ctypes
import errno
import json
import os
import resource
import socket
import stat
import subprocess
import sys
import threading

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

# x86-64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl)
NR = dict(ptrace=101, syslog=103, chroot=161, acct=163, settimeofday=164, mount=165, umount2=166, swapon=167,
          reboot=169, iopl=172, init_module=175, delete_module=176, clock_settime=227, kexec_load=246, add_key=248,
          keyctl=250, unshare=272, perf_event_open=298, name_to_handle_at=303, open_by_handle_at=304, setns=308,
          process_vm_readv=310, finit_module=313, bpf=321, userfaultfd=323, io_uring_setup=425, open_tree=428,
          fsopen=430)

MS_BIND, MS_REMOUNT, MNT_DETACH = 4096, 32, 2
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWCGROUP, CLONE_NEWNET = 0x20000, 0x10000000, 0x02000000, 0x40000000
PTRACE_ATTACH, PTRACE_SEIZE, PTRACE_DETACH = 16, 0x4206, 17

results = {}


def errname(code):
    return errno.errorcode.get(code, str(code))


def arg(value):
    if value is None:
        return ctypes.c_void_p(None)
    if isinstance(value, int):
        return ctypes.c_long(value)
    if isinstance(value, (bytes, str)):
        return ctypes.c_char_p(value.encode() if isinstance(value, str) else value)
    return value  # a ctypes object (byref, buffer)


def syscall(name, *args):
    """The system call's outcome: "ok" or the errno's name."""
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(NR[name]), *[arg(a) for a in args])
    return 'ok' if r >= 0 else errname(ctypes.get_errno())


def record(name, fn):
    try:
        value = fn()
    except OSError as e:
        value = {'outcome': errname(e.errno)}
    except Exception as e:  # a bug in the attack itself: visible in the test's message
        value = {'outcome': 'error', 'detail': repr(e)}
    results[name] = value if isinstance(value, dict) else {'outcome': value}


def write_file(path, data):
    """Writes data into an existing file (no create): "ok" or the errno's name."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        return errname(e.errno)
    try:
        os.write(fd, data.encode())
        return 'ok'
    except OSError as e:
        return errname(e.errno)
    finally:
        os.close(fd)


def create_file(path):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        return errname(e.errno)
    os.close(fd)
    os.unlink(path)
    return 'ok'


def command(argv):
    """Runs a command: "ok" when it exits 0, else "exit <code>" and the end of its stderr."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except FileNotFoundError:
        return {'outcome': 'absent'}
    if done.returncode == 0:
        return {'outcome': 'ok', 'detail': done.stdout[-200:]}
    return {'outcome': f'exit {done.returncode}', 'detail': done.stderr.strip()[-200:]}


def worst(outcomes):
    """Of several tries, "ok" when any succeeded; else the sorted distinct errors."""
    if 'ok' in outcomes:
        return 'ok'
    return ','.join(sorted(set(outcomes)))


def in_child(fn):
    """Runs fn in a forked child (for attacks that change the process: chroot, namespaces); its JSON-able result."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = fn()
        except OSError as e:
            out = {'outcome': errname(e.errno)}
        except Exception as e:
            out = {'outcome': 'error', 'detail': repr(e)}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b''
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


def mount_family():
    os.makedirs('/tmp/escape-mnt', exist_ok=True)
    record('mount tmpfs', lambda: syscall('mount', 'none', '/tmp/escape-mnt', 'tmpfs', 0, None))
    record('mount proc', lambda: syscall('mount', 'proc', '/tmp/escape-mnt', 'proc', 0, None))
    record('mount sysfs', lambda: syscall('mount', 'sysfs', '/tmp/escape-mnt', 'sysfs', 0, None))
    record('bind mount of /', lambda: syscall('mount', '/', '/tmp/escape-mnt', None, MS_BIND, None))
    record('remount /sys rw', lambda: syscall('mount', None, '/sys', None, MS_REMOUNT | MS_BIND, None))
    record('remount /proc/sys rw', lambda: syscall('mount', None, '/proc/sys', None, MS_REMOUNT | MS_BIND, None))
    record('unmount /proc/sys', lambda: syscall('umount2', '/proc/sys', MNT_DETACH))
    record('unmount masked /proc/keys', lambda: syscall('umount2', '/proc/keys', MNT_DETACH))
    record('fsopen tmpfs', lambda: syscall('fsopen', 'tmpfs', 0))
    record('open_tree clone of /', lambda: syscall('open_tree', -100, '/', 1))
    record('mount command', lambda: command(['mount', '-t', 'tmpfs', 'none', '/tmp/escape-mnt']))


def cgroups():
    # the classic escape: a v1 hierarchy mounted writable, notify_on_release=1 and a release_agent the kernel runs as
    # root on the host when the cgroup empties
    record('mount cgroup v1 (memory)', lambda: syscall('mount', 'cgroup', '/tmp/escape-mnt', 'cgroup', 0, 'memory'))
    record('mount cgroup v1 (rdma)', lambda: syscall('mount', 'cgroup', '/tmp/escape-mnt', 'cgroup', 0, 'rdma'))
    hierarchies = sorted(d for d in os.listdir('/sys/fs/cgroup') if os.path.isdir(f'/sys/fs/cgroup/{d}'))
    release_agents = []
    for h in hierarchies:
        path = f'/sys/fs/cgroup/{h}/release_agent'
        release_agents.append(write_file(path, '/escape') if os.path.exists(path) else create_file(path))
    record('write release_agent', lambda: {'outcome': worst(release_agents), 'hierarchies': hierarchies})
    record('set notify_on_release',
           lambda: worst([write_file(f'/sys/fs/cgroup/{h}/notify_on_release', '1') for h in hierarchies]))

    def mkdir_cgroup():
        outcomes = []
        for h in hierarchies:
            try:
                os.mkdir(f'/sys/fs/cgroup/{h}/escape')
                os.rmdir(f'/sys/fs/cgroup/{h}/escape')
                outcomes.append('ok')
            except OSError as e:
                outcomes.append(errname(e.errno))
        return worst(outcomes)

    record('create a child cgroup', mkdir_cgroup)
    record('raise own memory limit', lambda: write_file('/sys/fs/cgroup/memory/memory.limit_in_bytes', '-1'))
    record('raise own pids limit', lambda: write_file('/sys/fs/cgroup/pids/pids.max', 'max'))
    record('move into another cgroup', lambda: write_file('/sys/fs/cgroup/memory/cgroup.procs', str(os.getpid())))


def jdk_dir():
    """Where the host's JDK is bound read-only (its mount point, from the mount table)."""
    for line in open('/proc/self/mountinfo'):
        point = line.split()[4]
        if point.startswith('/usr/lib/jvm/'):
            return point
    raise FileNotFoundError(errno.ENOENT, 'no JDK mount')


def proc_and_sys():
    record('write kernel.core_pattern', lambda: write_file('/proc/sys/kernel/core_pattern', '|/tmp/escape %p'))
    record('write kernel.modprobe', lambda: write_file('/proc/sys/kernel/modprobe', '/tmp/escape'))
    record('write kernel.hostname', lambda: write_file('/proc/sys/kernel/hostname', 'escaped'))
    record('write vm.drop_caches', lambda: write_file('/proc/sys/vm/drop_caches', '3'))
    record('write vm.overcommit_memory', lambda: write_file('/proc/sys/vm/overcommit_memory', '1'))
    record('write net.ipv4.ip_forward', lambda: write_file('/proc/sys/net/ipv4/ip_forward', '0'))
    record('write /proc/sysrq-trigger', lambda: write_file('/proc/sysrq-trigger', 'h'))  # h: help, harmless
    record('write /sys/class/net/eth0/mtu', lambda: write_file('/sys/class/net/eth0/mtu', '1400'))
    record('write /sys/kernel/mm (THP)',
           lambda: write_file('/sys/kernel/mm/transparent_hugepage/enabled', 'never'))
    record('create /sys/kernel/uevent_helper', lambda: create_file('/sys/kernel/uevent_helper'))
    record('sethostname', lambda: 'ok' if libc.sethostname(b'escaped', 7) == 0 else errname(ctypes.get_errno()))
    record('create a file in /dev', lambda: create_file('/dev/escape'))
    # host files bound read-only into every sandbox (shared by all of them): envd, the JDK, resolv.conf
    record('write the shared envd jar', lambda: write_file('/opt/agentenv-envd/agentenv-envd.jar', 'x'))
    record('create a file in the shared JDK', lambda: create_file(jdk_dir() + '/escape'))
    record('write /etc/resolv.conf', lambda: write_file('/etc/resolv.conf', 'nameserver 10.0.0.1\n'))
    record('remount the JDK rw', lambda: syscall('mount', None, jdk_dir(), None, MS_REMOUNT | MS_BIND, None))


def modules():
    image = ctypes.create_string_buffer(b'\x7fELF' + b'\0' * 60)
    record('init_module', lambda: syscall('init_module', image, 64, ''))
    fd = os.open('/dev/null', os.O_RDONLY)
    record('finit_module', lambda: syscall('finit_module', fd, '', 0))
    os.close(fd)
    record('delete_module ext4', lambda: syscall('delete_module', 'ext4', os.O_NONBLOCK))
    record('kexec_load', lambda: syscall('kexec_load', 0, 0, None, 0))
    record('modprobe command', lambda: command(['modprobe', 'dummy']))


def devices():
    host_fs = os.stat('/opt/agentenv-envd').st_dev  # the host's own filesystem (envd's files, bound read-only)

    def mknod_and_open(name, kind, dev):
        path = f'/tmp/escape-{name}'
        try:
            os.mknod(path, kind | 0o600, dev)
        except OSError as e:
            return {'outcome': errname(e.errno)}
        try:  # mknod worked: can the node be used?
            fd = os.open(path, os.O_RDONLY)
            os.close(fd)
            opened = 'ok'
        except OSError as e:
            opened = errname(e.errno)
        finally:
            os.unlink(path)
        return {'outcome': 'ok', 'open': opened}

    record('mknod the host disk (block)', lambda: mknod_and_open(
        'disk', stat.S_IFBLK, os.makedev(os.major(host_fs), os.minor(host_fs))))
    record('mknod /dev/mem (char 1:1)', lambda: mknod_and_open('mem', stat.S_IFCHR, os.makedev(1, 1)))
    record('mknod /dev/kmsg (char 1:11)', lambda: mknod_and_open('kmsg', stat.S_IFCHR, os.makedev(1, 11)))


def sockets():
    def open_socket(family, kind, proto):
        s = socket.socket(family, kind, proto)
        s.close()
        return 'ok'

    record('AF_PACKET raw socket', lambda: open_socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)))
    record('AF_INET SOCK_RAW (IPPROTO_RAW)', lambda: open_socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW))
    record('AF_INET SOCK_RAW (ICMP)', lambda: open_socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
    other = FACTS['otherSandbox']
    record('take the other sandbox\'s address', lambda: command(['ip', 'addr', 'add', f'{other}/32', 'dev', 'eth0']))
    record('change the default route', lambda: command(['ip', 'route', 'replace', 'default', 'dev', 'eth0']))


def attach_and_detach(request, pid):
    """ptrace attach or seize of pid; "attached" (then detached again, the tracee running on) or the errno's name."""
    outcome = syscall('ptrace', request, pid, 0, 0)
    if outcome != 'ok':
        return outcome
    if request == PTRACE_ATTACH:
        os.waitpid(pid, os.WUNTRACED | 0x40000000)  # __WALL: the attach stops the tracee; detach from that stop
    syscall('ptrace', PTRACE_DETACH, pid, 0, 0)
    return 'attached'


def processes():
    procs = []
    for p in os.listdir('/proc'):
        if p.isdigit():
            try:
                with open(f'/proc/{p}/cmdline', 'rb') as f:
                    procs.append({'pid': int(p), 'cmd': f.read().replace(b'\0', b' ').decode(errors='replace')[:300]})
            except OSError:
                pass
    record('process list', lambda: {'outcome': 'listed', 'processes': procs})
    def attach_own_child():  # what a debugger (gdb -p, strace -p) does first, to a process of the same user
        child = subprocess.Popen(['sleep', '300'])
        try:
            return attach_and_detach(PTRACE_ATTACH, child.pid)
        finally:
            child.kill()
            child.wait()

    record('ptrace attach own child', attach_own_child)
    record('ptrace attach pid 1', lambda: attach_and_detach(PTRACE_ATTACH, 1))
    record('ptrace seize pid 1', lambda: attach_and_detach(PTRACE_SEIZE, 1))
    local = ctypes.create_string_buffer(8)
    iov = (ctypes.c_void_p * 2)(ctypes.cast(local, ctypes.c_void_p), 8)
    remote = (ctypes.c_void_p * 2)(0x400000, 8)
    record('process_vm_readv pid 1', lambda: syscall('process_vm_readv', 1, iov, 1, remote, 1, 0))
    host_pid = FACTS['hostServerPid']

    def signal_host_server():
        if any(p['pid'] == host_pid for p in procs):
            return {'outcome': 'pid-taken-inside'}  # the number names a sandbox process here: nothing to learn
        os.kill(host_pid, 0)
        return 'ok'

    record('signal the host server\'s pid', signal_host_server)
    record('ptrace attach the host server\'s pid', lambda: {'outcome': 'pid-taken-inside'}
           if any(p['pid'] == host_pid for p in procs) else attach_and_detach(PTRACE_ATTACH, host_pid))


def namespaces():
    record('unshare user namespace', lambda: in_child(lambda: syscall('unshare', CLONE_NEWUSER)))
    record('unshare mount namespace', lambda: in_child(lambda: syscall('unshare', CLONE_NEWNS)))
    record('unshare cgroup namespace', lambda: in_child(lambda: syscall('unshare', CLONE_NEWCGROUP)))
    record('unshare -U -r then mount', lambda: command(['unshare', '-U', '-r', 'mount', '-t', 'tmpfs', 'none', '/mnt']))
    record('unshare -Urm then mount', lambda: command(['unshare', '-Urm', 'mount', '-t', 'tmpfs', 'none', '/mnt']))

    def setns_all():
        outcomes = {}
        for ns in ('mnt', 'pid', 'net', 'uts', 'ipc', 'cgroup'):
            try:
                fd = os.open(f'/proc/1/ns/{ns}', os.O_RDONLY)
            except OSError as e:
                outcomes[ns] = errname(e.errno)
                continue
            outcomes[ns] = syscall('setns', fd, 0)
            os.close(fd)
        return {'outcome': worst(list(outcomes.values())), 'byNamespace': outcomes}

    record('setns into /proc/1/ns/*', lambda: in_child(setns_all))
    record('nsenter -t 1 -a', lambda: command(['nsenter', '-t', '1', '-a', 'true']))

    def chroot_escape():
        # the classic double chroot: chroot into a subdir while keeping a cwd outside it, then walk up
        os.makedirs('/tmp/escape-jail', exist_ok=True)
        os.chdir('/')
        os.chroot('/tmp/escape-jail')
        for _ in range(64):
            os.chdir('..')
        os.chroot('.')
        return {'outcome': 'ok',
                'seesHostMarker': os.path.exists(FACTS['markerPath']),
                'seesOwnEnvd': os.path.exists('/opt/agentenv-envd/agentenv-envd.jar')}

    record('chroot escape', lambda: in_child(chroot_escape))

    def proc_root():
        with open('/proc/1/root/etc/hostname') as f:
            hostname = f.read().strip()
        return {'outcome': 'read', 'etcHostname': hostname,
                'seesHostMarker': os.path.exists('/proc/1/root' + FACTS['markerPath'])}

    record('/proc/1/root', proc_root)


def kernel_interfaces():
    attr = ctypes.create_string_buffer(128)
    ctypes.memmove(attr, (ctypes.c_uint32 * 2)(1, 128), 8)  # type PERF_TYPE_SOFTWARE, size; config 0 = cpu clock
    record('perf_event_open', lambda: syscall('perf_event_open', attr, 0, -1, -1, 0))
    bpf_attr = ctypes.create_string_buffer(128)
    ctypes.memmove(bpf_attr, (ctypes.c_uint32 * 4)(2, 4, 4, 1), 16)  # BPF_MAP_TYPE_ARRAY, key 4, value 4, 1 entry
    record('bpf map create', lambda: syscall('bpf', 0, bpf_attr, 128))
    record('keyctl', lambda: syscall('keyctl', 0, -3, 0))  # KEYCTL_GET_KEYRING_ID of the session keyring
    record('add_key', lambda: syscall('add_key', 'user', 'escape', 'x', 1, -3))
    record('userfaultfd', lambda: syscall('userfaultfd', 0))
    params = ctypes.create_string_buffer(120)
    record('io_uring_setup', lambda: syscall('io_uring_setup', 1, params))
    record('iopl', lambda: syscall('iopl', 3))
    record('settimeofday', lambda: syscall('settimeofday', (ctypes.c_long * 2)(0, 0), None))
    record('clock_settime', lambda: syscall('clock_settime', 0, (ctypes.c_long * 2)(0, 0)))
    record('swapon', lambda: syscall('swapon', '/tmp/escape-swap', 0))
    record('acct', lambda: syscall('acct', '/tmp/escape-acct'))
    record('reboot (CAD off)', lambda: syscall('reboot', 0xfee1dead, 672274793, 0, None))

    def shocker():
        # open_by_handle_at with a guessed handle (ext4 root inode 2) against a file of the host's filesystem
        handle = ctypes.create_string_buffer(8 + 8)
        ctypes.memmove(handle, (ctypes.c_uint32 * 4)(8, 1, 2, 0), 16)  # handle_bytes 8, FILEID_INO32_GEN, ino, gen
        fd = os.open('/etc/resolv.conf', os.O_RDONLY)
        try:
            ctypes.set_errno(0)
            got = libc.syscall(ctypes.c_long(NR['open_by_handle_at']), ctypes.c_long(fd), handle,
                               ctypes.c_long(os.O_RDONLY | os.O_DIRECTORY))
            if got < 0:
                return errname(ctypes.get_errno())
            entries = os.listdir(got)
            os.close(got)
            return {'outcome': 'ok', 'hostRootEntries': entries[:20]}
        finally:
            os.close(fd)

    record('open_by_handle_at (shocker)', shocker)
    handle = ctypes.create_string_buffer(128)
    ctypes.memmove(handle, (ctypes.c_uint32 * 1)(120), 4)
    mount_id = ctypes.c_int()
    record('name_to_handle_at', lambda: syscall('name_to_handle_at', -100, '/etc/resolv.conf', handle,
                                                ctypes.byref(mount_id), 0))


def block_devices():
    """What sysfs tells about block devices: loop devices' backing files name every sandbox's disk on the host."""
    import glob
    found = []
    for pattern in ('/sys/block/*/loop/backing_file', '/sys/class/block/*/loop/backing_file',
                    '/sys/dev/block/*/loop/backing_file', '/sys/devices/virtual/block/*/loop/backing_file'):
        for path in glob.glob(pattern):
            try:
                with open(path) as f:
                    found.append(f.read().strip())
            except OSError:
                pass
    return {'outcome': 'leaked', 'files': sorted(set(found))[:5]} if found else 'hidden'


def kernel_log():
    record('loop devices backing files in sysfs', block_devices)
    buf = ctypes.create_string_buffer(4096)
    record('syslog(2) read all', lambda: syscall('syslog', 3, buf, 4096))
    record('dmesg', lambda: command(['dmesg']))

    def open_read(path):
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            os.read(fd, 4096)
        except BlockingIOError:
            pass
        finally:
            os.close(fd)
        return 'ok'

    record('read /dev/kmsg', lambda: open_read('/dev/kmsg'))
    record('read /proc/kmsg', lambda: open_read('/proc/kmsg'))

    def kallsyms():
        with open('/proc/kallsyms') as f:
            addresses = {line.split()[0] for _, line in zip(range(2000), f)}
        return {'outcome': 'zeroed' if addresses == {'0' * 16} else 'addresses', 'distinct': len(addresses)}

    record('/proc/kallsyms addresses', kallsyms)


def compat_abi():
    # the 32-bit system call ABI: escape-int80.c, built in the sandbox before this script runs
    if not os.path.exists('/tmp/escape-int80'):
        results['int80 getpid'] = {'outcome': 'not built'}
        return
    done = subprocess.run(['/tmp/escape-int80'], capture_output=True, text=True, timeout=10)
    for line in done.stdout.splitlines():
        entry = json.loads(line)
        results[entry['name']] = {'outcome': entry['outcome']}
    if done.returncode != 0:
        results['int80 getpid'] = {'outcome': 'error', 'detail': f'exit {done.returncode}: {done.stderr[-200:]}'}


def link_local(gateway, port):
    """The host end of the veth by its IPv6 link-local address (EUI-64 of its MAC, as the kernel makes it)."""
    with open('/proc/net/arp') as arp:
        macs = [line.split()[3] for line in arp.read().splitlines()[1:] if line.split()[0] == gateway]
    if not macs or macs[0] == '00:00:00:00:00:00':
        return {'outcome': 'error', 'detail': 'no ARP entry for the gateway'}
    octets = [int(x, 16) for x in macs[0].split(':')]
    octets[0] ^= 2
    eui = octets[:3] + [0xff, 0xfe] + octets[3:]
    address = 'fe80::' + ':'.join('%x' % ((eui[i] << 8) | eui[i + 1]) for i in range(0, 8, 2))
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.settimeout(4)
    try:
        s.connect((address, port, 0, socket.if_nametoindex('eth0')))
        s.sendall(b'GET /health HTTP/1.0\r\n\r\n')
        return {'outcome': 'connected', 'answer': s.recv(64).decode(errors='replace'), 'target': address}
    except socket.timeout:
        return 'timeout'
    except ConnectionRefusedError:
        return 'refused'
    except OSError as e:
        if e.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL):
            return 'unreachable'
        return errname(e.errno)
    finally:
        s.close()


def network():
    def connect(host, port):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect((host, port))
            s.sendall(b'GET /health HTTP/1.0\r\n\r\n')
            try:
                answer = s.recv(64).decode(errors='replace')
            except OSError:
                answer = ''
            return {'outcome': 'connected', 'answer': answer}
        except socket.timeout:
            return 'timeout'
        except ConnectionRefusedError:
            return 'refused'
        except OSError as e:
            return 'unreachable' if e.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH) else errname(e.errno)
        finally:
            s.close()

    probes = {
        'host API port on the gateway': (FACTS['gateway'], FACTS['serverPort']),
        'host SSH port on the gateway': (FACTS['gateway'], FACTS['sshPort']),
        'host loopback-only port via 127.0.0.1': ('127.0.0.1', FACTS['hostLoopbackPort']),
        'other sandbox envd port': (FACTS['otherSandbox'], 49983),
        'other sandbox open port': (FACTS['otherSandbox'], FACTS['otherSandboxPort']),
        'metadata address 169.254.169.254': ('169.254.169.254', 80),
    }
    if FACTS.get('hostNetworkGateway'):
        probes["the host network's gateway"] = (FACTS['hostNetworkGateway'], 80)
    for address in FACTS['hostAddresses']:
        probes[f'host API port on {address}'] = (address, FACTS['serverPort'])
    outcomes = {}

    def probe(name, target):
        try:
            value = connect(*target)
        except Exception as e:
            value = {'outcome': 'error', 'detail': repr(e)}
        outcomes[name] = value if isinstance(value, dict) else {'outcome': value}

    def abstract_socket():
        # abstract unix sockets belong to a network namespace: the host's must not be reachable
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect('\0' + FACTS['hostAbstractSocket'])
            return {'outcome': 'connected'}
        except ConnectionRefusedError:
            return 'refused'
        finally:
            s.close()

    record('host abstract unix socket', abstract_socket)
    record('host API port over IPv6 link-local', lambda: link_local(FACTS['gateway'], FACTS['serverPort']))
    threads = [threading.Thread(target=probe, args=item) for item in probes.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name in probes:
        results[name] = dict(outcomes[name], target=f'{probes[name][0]}:{probes[name][1]}')


def descriptors():
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)

    def raise_limit():
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard * 64, hard * 64))
        except ValueError:  # how Python reports setrlimit's EPERM for a raised hard limit
            return 'EPERM'
        return 'ok'

    record('raise RLIMIT_NOFILE past its hard limit', raise_limit)

    def exhaust():
        fds = []
        try:
            while len(fds) < 1 << 20:
                fds.append(os.open('/dev/null', os.O_RDONLY))
            return {'outcome': 'unbounded', 'opened': len(fds)}
        except OSError as e:
            return {'outcome': errname(e.errno), 'opened': len(fds), 'limit': hard}
        finally:
            for fd in fds:
                os.close(fd)

    record('open descriptors until refused', exhaust)


with open(sys.argv[1]) as facts:
    FACTS = json.load(facts)
network_thread = threading.Thread(target=network)  # up to 2 s of connection timeouts, meanwhile the rest
network_thread.start()
for group in (mount_family, cgroups, proc_and_sys, modules, devices, sockets, processes, namespaces,
              kernel_interfaces, kernel_log, compat_abi):
    try:
        group()
    except Exception as e:
        results[group.__name__] = {'outcome': 'error', 'detail': repr(e)}
network_thread.join()
descriptors()  # last: it takes every descriptor for a moment, the probes' sockets included
print(json.dumps({'uid': os.getuid(), 'results': results}))
