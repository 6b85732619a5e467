//! CPU time of a process, all its threads, from `/proc/<pid>/stat`.

use std::time::Duration;

/// Linux reports `utime` and `stime` in USER_HZ, 100 per second on every
/// architecture it exposes to user space.
const TICKS_PER_SECOND: u64 = 100;

/// User plus system CPU time used so far by process `pid` ("self" for this
/// one), or `None` when it cannot be read (no such process, no /proc).
pub fn cpu_time(pid: &str) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

/// `utime + stime` of a stat line. The command name (field 2) may hold
/// spaces and parentheses, so fields are counted after its last `)`.
fn parse_stat(stat: &str) -> Option<Duration> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    // After the name: state (3), ppid (4), … utime is field 14, stime 15.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime + stime;
    Some(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_utime_and_stime() {
        let line = "4242 (sluice (x) y) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0 \
                    12345 100000 2000 18446744073709551615";
        assert_eq!(parse_stat(line), Some(Duration::from_millis(3250)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn this_process_has_a_cpu_time() {
        assert!(cpu_time("self").is_some());
        assert!(cpu_time("0").is_none());
    }
}
