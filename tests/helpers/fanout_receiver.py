"""One multicast receiver for the fan-out test (tests/agents/test_fanout_netns.py).

Usage: fanout_receiver.py PORT GROUP IFACE_IP RCVBUF   (RCVBUF 0: the kernel's default)

Binds a UDP socket to PORT on every address (SO_REUSEADDR, as DDS participants do), joins
GROUP on the interface with IFACE_IP, prints ``ready <socket inode>``, then answers
commands on stdin, one per line:
  ``wait K``  block until K datagrams were read (20 s at most), print ``got <n>``
  ``drain``   read whatever is queued without blocking, print ``count <total read>``
EOF is the end. A Python process: its socket() is libc's, so an LD_PRELOAD shim applies.
"""

from __future__ import annotations

import os
import socket
import sys
import time


def main() -> int:
    port, group, iface, rcvbuf = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind(("", port))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 socket.inet_aton(group) + socket.inet_aton(iface))
    print("ready", os.fstat(s.fileno()).st_ino, flush=True)
    total = 0
    for line in sys.stdin:
        cmd = line.split()
        if cmd[:1] == ["wait"]:
            want, deadline = int(cmd[1]), time.monotonic() + 20
            while total < want and time.monotonic() < deadline:
                s.settimeout(max(deadline - time.monotonic(), 0.01))
                try:
                    s.recv(65536)
                except TimeoutError:
                    break
                total += 1
            print("got", total, flush=True)
        elif cmd[:1] == ["drain"]:
            s.setblocking(False)
            while True:
                try:
                    s.recv(65536)
                except BlockingIOError:
                    break
                total += 1
            print("count", total, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
