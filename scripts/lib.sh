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

# pg_cluster DIR [OPTIONS]: a throwaway PostgreSQL cluster in DIR on a
# free loopback port, started with the autovacuum settings docs/deploy.md
# recommends for sluice's database, PostgreSQL's defaults otherwise (fsync
# and synchronous_commit on), and any more server OPTIONS. Sets pg_bin,
# as_pg (the command prefix that runs as the postgres user when the script
# runs as root), pg_port, url and postmaster; stop it with
# pg_cluster_stop DIR.
pg_cluster() {
    local dir=$1 options=${2:-}
    pg_bin=$(pg_config --bindir 2>/dev/null || true)
    [ -x "$pg_bin/initdb" ] || pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    [ -x "$pg_bin/initdb" ] || { echo "PostgreSQL's binaries (initdb) not found" >&2; return 1; }
    as_pg=()
    if [ "$(id -u)" = 0 ]; then # PostgreSQL refuses to run as root
        chown postgres "$dir"
        as_pg=(runuser -u postgres --)
    fi
    pg_port=$(free_port)
    "${as_pg[@]}" "$pg_bin/initdb" -D "$dir/data" -U postgres --auth=trust >/dev/null
    "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$dir/data" -l "$dir/pg.log" -w -o "-p $pg_port -k $dir \
        -c listen_addresses=127.0.0.1 -c autovacuum_naptime=1 -c autovacuum_max_workers=3 \
        -c maintenance_work_mem=256MB $options" start >/dev/null
    url="postgres://postgres@127.0.0.1:$pg_port/postgres"
    postmaster=$(head -1 "$dir/data/postmaster.pid")
}

# The server options that make a cluster keep pg_stat_statements (for
# pg_cluster), and pg_statements: the extension created in its `postgres`
# database, its views readable there.
PG_STATEMENTS_OPTIONS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
pg_statements() {
    psql -X -q "$url" -c "CREATE EXTENSION pg_stat_statements" >/dev/null
}

# pg_cluster_stop DIR: stops the cluster pg_cluster started in DIR, if any.
pg_cluster_stop() {
    [ -n "${pg_bin:-}" ] && "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true
}

# proc_cpu PID: a process's user + system time, in clock ticks.
proc_cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# pg_cpu: the cluster's CPU time in clock ticks: the postmaster's own and
# its ended children's (reaped into cutime/cstime), and every live child's.
# A backend whose client has just gone may not be reaped yet: read it a
# moment after the load's clients end.
pg_cpu() {
    local total
    total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$postmaster/stat")
    for child in $(pgrep -P "$postmaster"); do
        total=$((total + $(proc_cpu "$child" 2>/dev/null || echo 0)))
    done
    echo "$total"
}
