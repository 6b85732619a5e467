"""Runs LocalStack's runtime (`python -m localstack.runtime.main`) with every
TCP listener of its gateway on 127.0.0.1, for scripts/peers.

LocalStack 4.14's twisted gateway (localstack/runtime/server/twisted.py)
opens each GATEWAY_LISTEN address with
`endpoints.TCP4ServerEndpoint(reactor, port)`, without the host: it listens
on all interfaces whatever GATEWAY_LISTEN says. Before the runtime starts,
this swaps the endpoint classes it looks up for ones that bind loopback only,
and refuses to start on any other address. Run it with the LocalStack venv's
python, GATEWAY_LISTEN=127.0.0.1:PORT and GATEWAY_SERVER=twisted.
"""

import os
import sys

from twisted.internet import endpoints

LOOPBACK_V4 = "127.0.0.1"
LOOPBACK_V6 = "::1"


class LoopbackTCP4ServerEndpoint(endpoints.TCP4ServerEndpoint):
    """An IPv4 server endpoint that binds 127.0.0.1, whatever it is given."""

    def __init__(self, reactor, port, backlog=50, interface=""):
        if interface not in ("", LOOPBACK_V4):
            sys.exit(f"localstack-loopback: refusing to listen on {interface}:{port}")
        super().__init__(reactor, port, backlog, interface=LOOPBACK_V4)


class LoopbackTCP6ServerEndpoint(endpoints.TCP6ServerEndpoint):
    """An IPv6 server endpoint that only accepts ::1."""

    def __init__(self, reactor, port, backlog=50, interface="::"):
        if interface != LOOPBACK_V6:
            sys.exit(f"localstack-loopback: refusing to listen on [{interface}]:{port}")
        super().__init__(reactor, port, backlog, interface=LOOPBACK_V6)


def main():
    listen = os.environ.get("GATEWAY_LISTEN", "")
    if not all(a.strip().startswith(LOOPBACK_V4 + ":") for a in listen.split(",")):
        sys.exit(f"localstack-loopback: GATEWAY_LISTEN must be 127.0.0.1:PORT, got {listen!r}")
    if os.environ.get("GATEWAY_SERVER", "twisted") != "twisted":
        # The hypercorn gateway binds by other means, which this does not patch.
        sys.exit("localstack-loopback: only GATEWAY_SERVER=twisted is kept on loopback")
    endpoints.TCP4ServerEndpoint = LoopbackTCP4ServerEndpoint
    endpoints.TCP6ServerEndpoint = LoopbackTCP6ServerEndpoint

    from localstack.runtime import main as runtime_main

    runtime_main.main()


if __name__ == "__main__":
    main()
