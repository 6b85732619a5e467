//! The shipped Prometheus alert rules and Grafana dashboard (rules M1, M2)
//! only use metrics the server exports: a renamed metric fails here, not
//! silently in someone's monitoring.

use std::collections::BTreeSet;
use std::path::PathBuf;

fn doc(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every `sluice_*` identifier in `text` (a metric name as PromQL writes it).
fn metric_refs(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = BTreeSet::new();
    let mut i = 0;
    while let Some(found) = text[i..].find("sluice_") {
        let start = i + found;
        let mut end = start;
        while end < bytes.len() && ident(bytes[end]) {
            end += 1;
        }
        if start == 0 || !ident(bytes[start - 1]) {
            out.insert(text[start..end].to_string());
        }
        i = end.max(start + 1);
    }
    out
}

fn assert_all_exported(what: &str, refs: &BTreeSet<String>) {
    let names: BTreeSet<String> = sluice_server::metrics::metric_names().into_iter().collect();
    let unknown: Vec<&String> = refs.iter().filter(|r| !names.contains(*r)).collect();
    assert!(
        unknown.is_empty(),
        "{what} uses metrics the server does not export: {unknown:?} (exported: {names:?})"
    );
}

/// Parentheses and brackets of a PromQL expression balance.
fn balanced(expr: &str) -> bool {
    let mut stack = Vec::new();
    for c in expr.chars() {
        match c {
            '(' | '[' | '{' => stack.push(c),
            ')' | ']' | '}' => {
                let open = stack.pop();
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if open != Some(want) {
                    return false;
                }
            }
            _ => {}
        }
    }
    stack.is_empty()
}

/// M2: every alert rule has an expression over exported metrics, and the
/// DLQ rule the seeds ask for is there.
#[test]
fn m2_prometheus_alert_rules_use_exported_metrics() {
    let text = doc("prometheus/alerts.yml");
    assert!(text.starts_with('#') || text.starts_with("groups:"));
    assert!(text.contains("\ngroups:\n"));
    // Each `- alert:` is followed by its `expr:` before the next rule.
    let mut alerts = 0;
    let mut exprs = Vec::new();
    let mut pending: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("- alert:") {
            assert!(pending.is_none(), "{pending:?} has no expr");
            pending = Some(name.trim().to_string());
            alerts += 1;
        } else if let Some(expr) = line.strip_prefix("expr:") {
            let name = pending.take().expect("expr outside an alert");
            let expr = expr.trim().to_string();
            assert!(balanced(&expr), "{name}: unbalanced {expr}");
            exprs.push((name, expr));
        }
    }
    assert!(pending.is_none(), "{pending:?} has no expr");
    assert!(alerts >= 5, "{alerts} alerts");
    let dlq = exprs
        .iter()
        .find(|(n, _)| n == "SluiceDeadLetterQueueNotEmpty")
        .expect("the DLQ alert");
    assert!(dlq.1.contains("sluice_queue_messages_visible >= 1"));
    assert!(dlq.1.contains("sluice_queue_dead_letter_sources"));
    let refs = metric_refs(&text);
    assert!(refs.len() >= 6, "{refs:?}");
    assert_all_exported("docs/prometheus/alerts.yml", &refs);
}

/// M1: the dashboard is valid JSON; every panel query is balanced and reads
/// exported metrics.
#[test]
fn m1_grafana_dashboard_uses_exported_metrics() {
    let text = doc("grafana/sluice.json");
    let dash: serde_json::Value = serde_json::from_str(&text).expect("dashboard JSON parses");
    assert_eq!(dash["uid"], "sluice-overview");
    let panels = dash["panels"].as_array().expect("panels");
    let mut queries = 0;
    for p in panels.iter().filter(|p| p["type"] != "row") {
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{} has no query", p["title"]);
        for t in targets {
            let expr = t["expr"].as_str().expect("expr");
            assert!(balanced(expr), "{}: unbalanced {expr}", p["title"]);
            assert!(!metric_refs(expr).is_empty(), "{}: {expr}", p["title"]);
            queries += 1;
        }
    }
    assert!(queries >= 10, "{queries} queries");
    let refs = metric_refs(&text);
    assert!(refs.contains("sluice_queue_dead_letter_sources"));
    assert!(refs.contains("sluice_alarm_state"));
    assert_all_exported("docs/grafana/sluice.json", &refs);
}

/// The checks above would catch a wrong name.
#[test]
fn unknown_names_are_caught() {
    let refs =
        metric_refs("rate(sluice_queue_messages_sent[5m]) + x_sluice_no + sluice_requests_total");
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        vec!["sluice_queue_messages_sent", "sluice_requests_total"]
    );
    let names = sluice_server::metrics::metric_names();
    assert!(
        !names.iter().any(|n| n == "sluice_queue_messages_sent"),
        "counters end in _total"
    );
    assert!(!balanced("sum(rate(x[5m])"));
}

/// M1: docs/metrics.md lists every metric the server exports (a
/// histogram by its name, without the `_bucket`, `_sum` and `_count` of
/// its series).
#[test]
fn m1_metrics_doc_lists_every_exported_metric() {
    let listed = metric_refs(&doc("metrics.md"));
    let missing: BTreeSet<String> = sluice_server::metrics::metric_names()
        .into_iter()
        .map(|n| {
            ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| n.strip_suffix(s))
                .map_or(n.clone(), str::to_string)
        })
        .filter(|n| !listed.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/metrics.md does not list {missing:?}"
    );
}
