//! sluice storage spike: group-commit throughput, recovery scan and disk space
//! for fjall 3, redb 4 and SQLite, all with sync on. See README.md.

mod engine;
#[cfg(feature = "fjall")]
mod fjall_engine;
#[cfg(feature = "redb")]
mod redb_engine;
#[cfg(feature = "sqlite")]
mod sqlite_engine;

use engine::{Batch, ENGINES, Key, Res, State};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BODY: usize = 1024;
const META: usize = 100;
const QUEUES: u64 = 4;
const LOAD_BATCH: usize = 1000;

fn usage() -> ! {
    eprintln!(
        "usage: storage-spike <cmd> [args] [--dir DIR]
  throughput ENGINE BATCH [--secs S]   group-commit pipeline, prints one table row
  load ENGINE N [--crash]              insert N messages (1000/commit); --crash exits without closing
  recover ENGINE [--cold]              open + scan everything into Vecs (--cold drops the page cache first)
  reclaim ENGINE                       delete everything, then the engine's explicit space reclaim
  all [--secs S] [--reps R] [--n N] [--engines a,b] [--batches 1,10] [--base DIR]   run the whole suite
engines: {ENGINES:?}; default --dir/--base is /tmp/sluice-spike"
    );
    std::process::exit(2)
}

struct Args {
    pos: Vec<String>,
    flags: Vec<(String, Option<String>)>,
}

impl Args {
    fn parse() -> Self {
        let (mut pos, mut flags) = (Vec::new(), Vec::new());
        let mut it = std::env::args().skip(1).peekable();
        while let Some(a) = it.next() {
            if let Some(name) = a.strip_prefix("--") {
                let val = match it.peek() {
                    Some(v) if !v.starts_with("--") && !matches!(name, "crash" | "cold") => it.next(),
                    _ => None,
                };
                flags.push((name.to_string(), val));
            } else {
                pos.push(a);
            }
        }
        Self { pos, flags }
    }
    fn flag(&self, name: &str) -> Option<&str> {
        self.flags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_deref().unwrap_or(""))
    }
    fn num(&self, name: &str, default: u64) -> u64 {
        self.flag(name).map(|v| v.parse().expect("number")).unwrap_or(default)
    }
    fn pos(&self, i: usize) -> &str {
        self.pos.get(i).map(String::as_str).unwrap_or_else(|| usage())
    }
}

fn main() -> Res<()> {
    let a = Args::parse();
    let base = PathBuf::from(a.flag("base").or(a.flag("dir")).unwrap_or("/tmp/sluice-spike"));
    match a.pos.first().map(String::as_str) {
        Some("throughput") => {
            let (eng, batch) = (a.pos(1), a.pos(2).parse()?);
            throughput(eng, batch, Duration::from_secs(a.num("secs", 5)), &base)
        }
        Some("load") => load(a.pos(1), a.pos(2).parse()?, a.flag("crash").is_some(), &base),
        Some("recover") => recover(a.pos(1), a.flag("cold").is_some(), &base),
        Some("reclaim") => reclaim(a.pos(1), &base),
        Some("all") => all(&a, &base),
        _ => usage(),
    }
}

// ---------------------------------------------------------------- data model

fn key(i: u64) -> Key {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&(i % QUEUES).to_be_bytes());
    k[8..].copy_from_slice(&(i / QUEUES).to_be_bytes());
    k
}

fn state(receives: u32, visible_at: u64, first_receive: u64) -> State {
    let mut s = [0u8; 20];
    s[..4].copy_from_slice(&receives.to_be_bytes());
    s[4..12].copy_from_slice(&visible_at.to_be_bytes());
    s[12..].copy_from_slice(&first_receive.to_be_bytes());
    s
}

/// ~100 B metadata + 1 KiB body of pseudo-random (incompressible) bytes, unique per message.
fn message(i: u64) -> Vec<u8> {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v = Vec::with_capacity(META + BODY);
    while v.len() < META + BODY {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(META + BODY);
    v
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

fn fresh_dir(base: &Path, eng: &str) -> Res<PathBuf> {
    let dir = base.join(eng);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// (allocated bytes as `du` counts them, apparent bytes) of everything under `p`.
fn disk_usage(p: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let (mut alloc, mut len) = (0, 0);
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                let (a, l) = disk_usage(&e.path());
                alloc += a;
                len += l;
            } else {
                alloc += m.blocks() * 512;
                len += m.len();
            }
        }
    }
    (alloc, len)
}

fn mib(b: u64) -> String {
    format!("{:.0}", b as f64 / (1024.0 * 1024.0))
}

// ---------------------------------------------------------------- (a) throughput

/// Group-commit pipeline: commit c inserts messages [cN, (c+1)N), receives (state
/// update) the N inserted by commit c-1 and deletes the N updated by commit c-2.
/// One message life = 5 record writes spread over 3 commits.
fn throughput(eng: &str, n: u64, secs: Duration, base: &Path) -> Res<()> {
    let dir = fresh_dir(base, eng)?;
    let mut db = engine::open(eng, &dir)?;
    let mut b = Batch::default();
    let mut c: u64 = 0;
    let mut step = |db: &mut Box<dyn engine::Engine>, c: u64| -> Res<()> {
        b.clear();
        let t = now_ms();
        for i in c * n..(c + 1) * n {
            b.inserts.push((key(i), message(i), state(0, t, 0)));
        }
        if c >= 1 {
            for i in (c - 1) * n..c * n {
                b.updates.push((key(i), state(1, t + 30_000, t)));
            }
        }
        if c >= 2 {
            for i in (c - 2) * n..(c - 1) * n {
                b.deletes.push(key(i));
            }
        }
        db.commit(&b)
    };
    // 1 s warm-up (file growth, first flushes), not counted.
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_secs(1) {
        step(&mut db, c)?;
        c += 1;
    }
    let mut lat = Vec::new();
    let start = Instant::now();
    while start.elapsed() < secs {
        let t = Instant::now();
        step(&mut db, c)?;
        lat.push(t.elapsed());
        c += 1;
    }
    let el = start.elapsed().as_secs_f64();
    lat.sort();
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e3;
    let commits = lat.len() as f64;
    println!(
        "| {eng} | {n} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2} |",
        commits * n as f64 / el,
        commits / el,
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

// ---------------------------------------------------------------- (b)/(c) load, recover, reclaim

fn load(eng: &str, n: u64, crash: bool, base: &Path) -> Res<()> {
    let dir = fresh_dir(base, eng)?;
    let mut db = engine::open(eng, &dir)?;
    let t = now_ms();
    let start = Instant::now();
    let mut b = Batch::default();
    for chunk in (0..n).collect::<Vec<_>>().chunks(LOAD_BATCH) {
        b.clear();
        b.inserts.extend(chunk.iter().map(|&i| (key(i), message(i), state(0, t, 0))));
        db.commit(&b)?;
    }
    let el = start.elapsed().as_secs_f64();
    let (alloc, len) = disk_usage(&dir);
    println!(
        "| {eng} | {n} | {el:.1} | {:.0} | {} | {} |",
        n as f64 / el,
        mib(alloc),
        mib(len)
    );
    if crash {
        // Simulated crash: no destructors, no clean shutdown. Everything acked is fsynced.
        std::process::exit(0);
    }
    Ok(())
}

fn recover(eng: &str, cold: bool, base: &Path) -> Res<()> {
    let dir = base.join(eng);
    if cold {
        // sync + drop the page cache so the scan reads from the disk (needs root).
        Command::new("sync").status()?;
        std::fs::write("/proc/sys/vm/drop_caches", "3")?;
    }
    let t = Instant::now();
    let mut db = engine::open(eng, &dir)?;
    let open = t.elapsed();
    let t = Instant::now();
    let scan = db.scan_all()?;
    let scanned = t.elapsed();
    assert_eq!(scan.states.len(), scan.messages.len());
    let bytes: usize = scan.messages.iter().map(|(_, v)| v.len()).sum();
    assert_eq!(bytes, scan.messages.len() * (META + BODY));
    println!(
        "| {eng} | {} | {} | {:.2} | {:.2} | {:.2} |",
        if cold { "cold" } else { "warm" },
        scan.messages.len(),
        open.as_secs_f64(),
        scanned.as_secs_f64(),
        (open + scanned).as_secs_f64()
    );
    Ok(())
}

fn reclaim(eng: &str, base: &Path) -> Res<()> {
    let dir = base.join(eng);
    let mut db = engine::open(eng, &dir)?;
    let keys: Vec<Key> = db.scan_all()?.states.into_iter().map(|(k, _)| k).collect();
    let before = disk_usage(&dir).0;
    let start = Instant::now();
    let mut b = Batch::default();
    for chunk in keys.chunks(LOAD_BATCH) {
        b.clear();
        b.deletes.extend_from_slice(chunk);
        db.commit(&b)?;
    }
    let del = start.elapsed().as_secs_f64();
    let after_delete = disk_usage(&dir).0;
    // Let background maintenance (fjall flush/compaction) run a little, unprompted.
    std::thread::sleep(Duration::from_secs(3));
    let after_idle = disk_usage(&dir).0;
    let t = Instant::now();
    db.reclaim()?;
    let rec = t.elapsed().as_secs_f64();
    let after_reclaim = disk_usage(&dir).0;
    drop(db);
    let after_close = disk_usage(&dir).0;
    println!(
        "| {eng} | {} | {del:.1} | {} | {} | {} | {rec:.1} | {} | {} |",
        keys.len(),
        mib(before),
        mib(after_delete),
        mib(after_idle),
        mib(after_reclaim),
        mib(after_close)
    );
    Ok(())
}

// ---------------------------------------------------------------- whole suite

fn all(a: &Args, base: &Path) -> Res<()> {
    let exe = std::env::current_exe()?;
    let secs = a.num("secs", 5).to_string();
    let n = a.num("n", 1_000_000).to_string();
    let engines: Vec<String> = a
        .flag("engines")
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_else(|| ENGINES.iter().map(|s| s.to_string()).collect());
    let batches: Vec<String> = a
        .flag("batches")
        .unwrap_or("1,10,100,1000")
        .split(',')
        .map(String::from)
        .collect();
    // Each measurement runs in its own child process (isolation, and so `load --crash`
    // really leaves an unclean database behind for `recover`).
    let run = |args: &[&str]| -> Res<()> {
        let st = Command::new(&exe).args(args).args(["--dir", base.to_str().unwrap()]).status()?;
        if !st.success() {
            return Err(format!("child {args:?} failed: {st}").into());
        }
        Ok(())
    };
    println!("dir: {}\n", base.display());
    let reps = a.num("reps", 3);
    println!("(a) group-commit pipeline, sync on, {secs} s per run after 1 s warm-up, {reps} interleaved runs per cell");
    eprintln!("raw (a) runs: | engine | msgs/commit | msgs/s | commits/s | p50 ms | p99 ms | max ms |");
    // cell -> list of parsed rows [msgs/s, commits/s, p50, p99, max]
    let mut cells: Vec<((String, String), Vec<Vec<f64>>)> = Vec::new();
    for _ in 0..reps {
        for b in &batches {
            for e in &engines {
                let out = Command::new(&exe)
                    .args(["throughput", e, b, "--secs", &secs, "--dir", base.to_str().unwrap()])
                    .output()?;
                let row = String::from_utf8(out.stdout)?;
                if !out.status.success() {
                    return Err(format!("throughput {e} {b} failed: {}", String::from_utf8_lossy(&out.stderr)).into());
                }
                eprint!("{row}");
                let nums: Vec<f64> = row.split('|').skip(3).filter_map(|f| f.trim().parse().ok()).collect();
                let key = (e.clone(), b.clone());
                match cells.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, v)) => v.push(nums),
                    None => cells.push((key, vec![nums])),
                }
            }
        }
    }
    println!("\n| engine | msgs/commit | msgs/s (median) | msgs/s (min–max) | commits/s (median) | p50 commit ms | p99 commit ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let median = |rows: &Vec<Vec<f64>>, i: usize| {
        let mut v: Vec<f64> = rows.iter().map(|r| r[i]).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    for e in &engines {
        for b in &batches {
            let rows = &cells.iter().find(|(k, _)| k.0 == *e && k.1 == *b).unwrap().1;
            let (m, lo, hi) = median(rows, 0);
            println!(
                "| {e} | {b} | {m:.0} | {lo:.0}–{hi:.0} | {:.0} | {:.2} | {:.2} |",
                median(rows, 1).0,
                median(rows, 2).0,
                median(rows, 3).0
            );
        }
    }
    println!("\n(b)/(c) bulk load of {n} messages, 1000/commit, then the process exits WITHOUT closing the store\n");
    println!("| engine | messages | load s | load msgs/s | disk MiB (du) | apparent MiB |");
    println!("|---|---:|---:|---:|---:|---:|");
    for e in &engines {
        run(&["load", e, &n, "--crash"])?;
    }
    println!("\n(b) recovery after that crash: open, then scan every state + message record into Vecs\n");
    println!("| engine | cache | messages | open s | scan s | total s |");
    println!("|---|---|---:|---:|---:|---:|");
    for e in &engines {
        // first open after the crash, from a cold page cache (includes any crash repair)
        run(&["recover", e, "--cold"])?;
        run(&["recover", e])?; // clean reopen, warm cache
    }
    println!("\n(c) delete everything (1000 deletes/commit), then the engine's explicit reclaim\n");
    println!("| engine | messages | delete s | MiB before | MiB after delete | MiB after 3 s idle | reclaim s | MiB after reclaim | MiB after close |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for e in &engines {
        run(&["reclaim", e])?;
        let _ = std::fs::remove_dir_all(base.join(e));
    }
    Ok(())
}
