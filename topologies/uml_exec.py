"""Run commands inside a user-mode Linux router: a tiny server in the router's kernel, a client
outside it.

A user-mode router (topologies/uml.py) is a kernel of its own, so the router namespace's
shell cannot reach its processes, files in /proc or interfaces. Its init starts this file
as ``serve`` on the router's management link; every command the testbed runs on the router
(configuration, pimd, FRR, smcroute, `cat /proc/net/ip_mr_cache`) goes through ``client``,
started in the router's namespace like any command of a node. The client behaves as the
command itself would: its stdout and stderr carry the command's, it exits with the
command's status, SIGINT/SIGTERM/SIGHUP are passed on, and when the client dies (even by
SIGKILL) the connection closes and the server stops the command: nothing started through
it outlives its client.

Standard library only: the server runs in the router's kernel with the host's Python seen
read-only through hostfs, and the client starts for every command.

Protocol (TCP): the client sends one request frame (JSON: argv, env, cwd), then signal frames
(``s`` + signal number); the server sends ``o`` (stdout bytes), ``e`` (stderr bytes) and one
``x`` frame (JSON: the status, negative for a signal, or an error text). A frame is a type
byte, a 4-byte big-endian length and the payload.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from typing import Any

HEADER = struct.Struct("!cI")
KILL_GRACE_S = 2.0


def _send(sock: socket.socket, kind: bytes, payload: bytes, lock: threading.Lock) -> None:
    with lock:
        sock.sendall(HEADER.pack(kind, len(payload)) + payload)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def _recv(sock: socket.socket) -> tuple[bytes, bytes]:
    kind, size = HEADER.unpack(_recv_exact(sock, HEADER.size))
    return kind, _recv_exact(sock, size)


# --- server (inside the router's kernel) ---------------------------------------------------
def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the command's process group, SIGKILL after a grace period."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=KILL_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def _serve_one(conn: socket.socket) -> None:
    lock = threading.Lock()
    with conn:
        try:
            _kind, payload = _recv(conn)
            request: dict[str, Any] = json.loads(payload)
            env = {**os.environ, **request.get("env", {})}
            proc = subprocess.Popen(request["argv"], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                    cwd=request.get("cwd") or "/", start_new_session=True)
        except EOFError:
            return
        except (OSError, ValueError, KeyError) as e:
            with contextlib.suppress(OSError):
                _send(conn, b"x", json.dumps({"error": str(e)}).encode(), lock)
            return

        def pump(stream: Any, kind: bytes) -> None:
            for chunk in iter(lambda: stream.read1(65536), b""):
                try:
                    _send(conn, kind, chunk, lock)
                except OSError:
                    _stop(proc)
                    return

        def control() -> None:
            """Signals from the client; its end of the connection closing stops the command."""
            try:
                while True:
                    kind, payload = _recv(conn)
                    if kind == b"s":
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(proc.pid, int(payload))
            except (EOFError, OSError, ValueError):
                if proc.poll() is None:
                    _stop(proc)

        pumps = [threading.Thread(target=pump, args=(proc.stdout, b"o"), daemon=True),
                 threading.Thread(target=pump, args=(proc.stderr, b"e"), daemon=True)]
        for t in pumps:
            t.start()
        threading.Thread(target=control, daemon=True).start()
        rc = proc.wait()
        for t in pumps:
            t.join()
        with contextlib.suppress(OSError):
            _send(conn, b"x", json.dumps({"rc": rc}).encode(), lock)
            conn.shutdown(socket.SHUT_WR)
            # Wait for the client to close, so that its last frames are read.
            conn.settimeout(5)
            with contextlib.suppress(OSError, EOFError):
                while conn.recv(4096):
                    pass


def serve(addr: str, port: int) -> None:
    """Accept commands forever (the router's init execs this; it ends with the kernel)."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(64)
    print("mcastlab-uml-ready", flush=True)
    while True:
        conn, _ = srv.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_serve_one, args=(conn,), daemon=True).start()


# --- client (in the router's namespace, on the host) ---------------------------------------
def client(addr: str, port: int, argv: list[str], timeout: float = 10.0) -> int:
    """Run `argv` in the router; returns the status to exit with (128 + N for signal N,
    125 when the router could not be reached or could not start the command)."""
    try:
        sock = socket.create_connection((addr, port), timeout=timeout)
    except OSError as e:
        print(f"uml_exec: the user-mode router at {addr}:{port} is not answering: {e}",
              file=sys.stderr)
        return 125
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    lock = threading.Lock()
    request = {"argv": argv, "cwd": os.getcwd() if os.path.isabs(os.getcwd()) else "/"}
    _send(sock, b"r", json.dumps(request).encode(), lock)

    def forward(signum: int, _frame: Any) -> None:
        with contextlib.suppress(OSError):
            _send(sock, b"s", str(signum).encode(), lock)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    out = {b"o": sys.stdout.buffer, b"e": sys.stderr.buffer}
    while True:
        try:
            kind, payload = _recv(sock)
        except (EOFError, OSError):
            print("uml_exec: the user-mode router closed the connection (did it stop?)",
                  file=sys.stderr)
            return 125
        if kind in out:
            try:
                out[kind].write(payload)
                out[kind].flush()
            except BrokenPipeError:
                return 141
            continue
        result = json.loads(payload)
        sock.close()
        if "error" in result:
            print(f"uml_exec: {argv[0]}: {result['error']}", file=sys.stderr)
            return 127 if "No such file" in result["error"] else 126
        rc = int(result["rc"])
        return 128 - rc if rc < 0 else rc


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["serve"] and len(args) == 3:
        serve(args[1], int(args[2]))
    elif args[:1] == ["client"] and len(args) >= 5 and args[3] == "--":
        sys.exit(client(args[1], int(args[2]), args[4:]))
    else:
        sys.exit("usage: uml_exec.py serve ADDR PORT | client ADDR PORT -- ARGV...")


if __name__ == "__main__":
    main()
