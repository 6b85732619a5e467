# Helpers the measurement scripts share; source it from the repository's
# root (`. scripts/lib.sh`), after `cd "$(dirname "$0")/.."`.

# free_port: a loopback port nothing listens on now, for a server that
# cannot report the one it picked.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_listening LOG [TENTHS]: waits until a sluice server writing to LOG
# says it listens (at most TENTHS tenths of a second, default 600); prints
# the log and fails if it does not.
wait_listening() {
    local tries=${2:-600}
    for _ in $(seq 1 "$tries"); do
        grep -q listening "$1" && return 0
        sleep 0.1
    done
    cat "$1" >&2
    return 1
}
