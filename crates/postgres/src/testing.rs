//! A throwaway PostgreSQL for tests: one cluster per test binary, in a
//! temporary directory on a free loopback port, with a fresh database per
//! test so tests run in parallel.
//!
//! The binaries are found through `pg_config --bindir`, then
//! `/usr/lib/postgresql/*/bin`, then `PATH`. PostgreSQL refuses to run as
//! root: as root the cluster runs as the `postgres` system user. A
//! watchdog process stops the cluster (`-m immediate`) and removes its
//! directory as soon as the test process is gone, however it ended.
//!
//! Without binaries, [`cluster`] prints a loud `SKIPPED` line and returns
//! `None`; tests then pass without running. With `SLUICE_REQUIRE_POSTGRES=1`
//! (as CI sets it) missing binaries fail every test that wanted them
//! instead, so a machine without PostgreSQL cannot pass by accident.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// A running throwaway cluster.
#[derive(Debug)]
pub struct TestCluster {
    port: u16,
    bindir: PathBuf,
    /// The cluster's data directory, its log and `postgres` options, for
    /// a restart.
    data: PathBuf,
    log: PathBuf,
    options: String,
}

impl TestCluster {
    /// The URL of database `db` on this cluster.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// The directory of the PostgreSQL binaries in use.
    pub fn bindir(&self) -> &Path {
        &self.bindir
    }

    /// Stops the cluster as a crash would (`pg_ctl stop -m immediate`):
    /// every session ends at once.
    pub fn stop(&self) {
        let status = as_owner(&self.bindir.join("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run pg_ctl stop");
        assert!(status.success(), "pg_ctl stop failed");
    }

    /// Starts the stopped cluster again on its port (crash recovery
    /// first, after [`TestCluster::stop`]); returns once it accepts
    /// connections.
    pub fn start(&self) {
        run_pg_ctl_start(&self.bindir, &self.data, &self.log, &self.options);
    }

    /// Creates a new, empty database and returns its URL.
    pub async fn fresh_database(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "sluice_test_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let (client, connection) =
            tokio_postgres::connect(&self.url("postgres"), tokio_postgres::NoTls)
                .await
                .expect("connect to the test cluster");
        let driver = tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create a test database");
        drop(client);
        let _ = driver.await;
        self.url(&name)
    }
}

impl Drop for TestCluster {
    // A private cluster stops with its test; the watchdog removes its
    // directory when the process ends.
    fn drop(&mut self) {
        let _ = as_owner(&self.bindir.join("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Two engines on one fresh database, as two nodes of a deployment
/// (manual clocks, pools of 4), with the database's URL; `None` without
/// PostgreSQL.
pub async fn two_nodes() -> Option<(String, crate::PostgresBroker, crate::PostgresBroker)> {
    let url = cluster()?.fresh_database().await;
    let node = || async {
        let options = crate::PostgresOptions {
            pool_size: 4,
            ..Default::default()
        };
        let clock = std::sync::Arc::new(sluice_core::ManualClock::default());
        crate::PostgresBroker::connect(&url, clock, options)
            .await
            .expect("connect to the test database")
    };
    let (a, b) = (node().await, node().await);
    Some((url, a, b))
}

/// A plain connection to the database at `url`, beside the engines, for
/// tests that look at or prepare the stored rows.
pub async fn plain_connection(url: &str) -> tokio_postgres::Client {
    let (db, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to the test database");
    tokio::spawn(connection);
    db
}

/// Creates the queue `name` with the attributes `pairs` through `node`.
pub async fn create_queue(node: &crate::PostgresBroker, name: &str, pairs: &[(&str, &str)]) {
    use sluice_broker::Broker;
    let requested: std::collections::BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    node.create_queue(sluice_broker::CreateQueue {
        name: name.into(),
        config: sluice_core::attributes::QueueConfig::for_create(name, &requested)
            .expect("valid attributes"),
        requested,
        tags: std::collections::BTreeMap::new(),
    })
    .await
    .expect("create the queue");
}

/// The cluster of this test process, started on first use; `None` (after a
/// loud message) when PostgreSQL's binaries are not installed.
pub fn cluster() -> Option<&'static TestCluster> {
    static CLUSTER: OnceLock<Option<TestCluster>> = OnceLock::new();
    CLUSTER
        .get_or_init(|| available_bindir().map(|bindir| start(bindir, false)))
        .as_ref()
}

/// The binaries' directory; `None` (after a loud message) when they are
/// not installed, or a panic when they must be.
fn available_bindir() -> Option<PathBuf> {
    match find_bindir() {
        Some(bindir) => Some(bindir),
        None if postgres_required() => panic!(
            "SLUICE_REQUIRE_POSTGRES=1 but PostgreSQL's binaries (initdb, pg_ctl) \
             were not found: install PostgreSQL (Debian: apt-get install postgresql)"
        ),
        None => {
            // Straight to the stderr stream: the test harness captures
            // eprintln! of passing tests, and this must be seen.
            let _ = writeln!(
                std::io::stderr(),
                "\n==============================================================\n\
                 SKIPPED: PostgreSQL binaries not found (initdb, pg_ctl).\n\
                 Install PostgreSQL (Debian: apt-get install postgresql) to run\n\
                 the PostgreSQL engine's tests.\n\
                 =============================================================="
            );
            None
        }
    }
}

/// A cluster of the caller's own, apart from the shared one, for a test
/// that stops and restarts it ([`TestCluster::stop`], [`TestCluster::start`]);
/// `None` without PostgreSQL's binaries, and a panic instead with
/// `SLUICE_REQUIRE_POSTGRES=1`, as [`cluster`]. Its commits are
/// synchronous, so that a stop loses nothing a client was told is stored.
pub fn private_cluster() -> Option<TestCluster> {
    Some(start(available_bindir()?, true))
}

/// True when the environment says the PostgreSQL tests must run
/// (`SLUICE_REQUIRE_POSTGRES=1`).
fn postgres_required() -> bool {
    std::env::var("SLUICE_REQUIRE_POSTGRES").is_ok_and(|v| v == "1")
}

/// Where `initdb` and `pg_ctl` are.
fn find_bindir() -> Option<PathBuf> {
    let has_tools = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if has_tools(&dir) {
            return Some(dir);
        }
    }
    if let Ok(entries) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut versions: Vec<(u32, PathBuf)> = entries
            .flatten()
            .filter_map(|e| {
                let version = e.file_name().to_string_lossy().parse().ok()?;
                Some((version, e.path().join("bin")))
            })
            .filter(|(_, dir)| has_tools(dir))
            .collect();
        versions.sort();
        if let Some((_, dir)) = versions.pop() {
            return Some(dir);
        }
    }
    std::env::var_os("PATH")
        .and_then(|path| std::env::split_paths(&path).find(|dir| has_tools(dir)))
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// A command run as the cluster's owner.
fn as_owner(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Starts a cluster; `synchronous_commit` off (the shared cluster's
/// speed) may lose the last commits to a stop.
fn start(bindir: PathBuf, synchronous_commit: bool) -> TestCluster {
    let dir = tempfile::Builder::new()
        .prefix("sluice-pg-")
        .tempdir()
        .expect("temp dir")
        .keep();
    if is_root() {
        let status = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&dir)
            .status()
            .expect("run chown");
        assert!(status.success(), "chown of {} failed", dir.display());
    }
    let data = dir.join("data");
    let out = as_owner(&bindir.join("initdb"))
        .arg("-D")
        .arg(&data)
        .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
        .stdin(Stdio::null())
        .output()
        .expect("run initdb");
    assert!(
        out.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let mut options = format!(
        "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} \
         -c fsync=off -c synchronous_commit={} -c full_page_writes=off \
         -c max_connections=400 -c shared_buffers=64MB",
        dir.display(),
        if synchronous_commit { "on" } else { "off" },
    );
    // Statement counts per action (tests/statements.rs), where installed.
    if bindir
        .parent()
        .is_some_and(|d| d.join("lib/pg_stat_statements.so").is_file())
    {
        options.push_str(" -c shared_preload_libraries=pg_stat_statements");
    }
    let log = dir.join("server.log");
    run_pg_ctl_start(&bindir, &data, &log, &options);
    spawn_watchdog(&bindir, &data, &dir);
    TestCluster {
        port,
        bindir,
        data,
        log,
        options,
    }
}

fn run_pg_ctl_start(bindir: &Path, data: &Path, log: &Path, options: &str) {
    // No pipes: the server would inherit them and keep them open.
    let status = as_owner(&bindir.join("pg_ctl"))
        .arg("-D")
        .arg(data)
        .arg("-l")
        .arg(log)
        .args(["-o", options, "-w", "-t", "60", "start"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run pg_ctl start");
    if !status.success() {
        let log = std::fs::read_to_string(log).unwrap_or_default();
        panic!("PostgreSQL did not start:\n{log}");
    }
}

/// Stops the cluster and removes its directory once this process is gone.
/// It must outlive this process, so it is never waited for.
#[allow(clippy::zombie_processes)]
fn spawn_watchdog(bindir: &Path, data: &Path, dir: &Path) {
    let owner = if is_root() {
        "runuser -u postgres -- "
    } else {
        ""
    };
    let script = format!(
        "while [ -d /proc/{pid} ]; do sleep 0.2; done; \
         {owner}'{pg_ctl}' -D '{data}' -m immediate stop >/dev/null 2>&1; rm -rf '{dir}'",
        pid = std::process::id(),
        pg_ctl = bindir.join("pg_ctl").display(),
        data = data.display(),
        dir = dir.display(),
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the cluster's watchdog");
}
