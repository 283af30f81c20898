"""Ports for the third-party servers that cannot listen on port 0 and say which port they got
(PostgreSQL, tinyproxy): the one rule (docs/design.md §7), standard library only.

Every server that can — imgmcp, the Gemini fake, Prometheus — listens on port 0 and reports the
port it got. Nothing binds a port, closes it and hands the number on: between the close and the
server's bind, any other port-0 listener may be given it. For the others, on_a_free_port() starts
the server on a port drawn below the kernel's ephemeral range (where port 0 never lands), and on
a fresh draw when the server says the address is in use. A test that needs a port nobody answers
holds one with refusing_port().

Import it with tests/support on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
"""
import random
import socket

ATTEMPTS = 20


class AddressInUse(Exception):
    """Raised by a start function when its server reported the port taken."""


def ephemeral_range():
    """The kernel's range for port 0 and outgoing connections: (low, high)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(p) for p in f.read().split())
            return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def candidate_port():
    """A port below the ephemeral range (at least 1024), drawn at random."""
    low, _ = ephemeral_range()
    return random.randrange(1024 if low <= 11024 else 10000, low)


def refusing_port(test):
    """A port on 127.0.0.1 that refuses connections for as long as `test` runs: bound by a
    socket that never listens, so no other process can take it (closed at the test's cleanup)."""
    held = socket.socket()
    test.addCleanup(held.close)
    held.bind(("127.0.0.1", 0))
    return held.getsockname()[1]


def on_a_free_port(start):
    """start(port) for candidate ports until it does not raise AddressInUse; its result.
    Fails after ATTEMPTS ports, with the last server's words."""
    last = None
    for _ in range(ATTEMPTS):
        try:
            return start(candidate_port())
        except AddressInUse as e:
            last = e
    raise RuntimeError(f"every one of {ATTEMPTS} ports tried was in use; last: {last}")
