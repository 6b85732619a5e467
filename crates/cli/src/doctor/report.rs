//! What `sluice doctor`'s checks find: findings with their severity,
//! and the checks that could not run.

use std::fmt;

use serde::Serialize;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; a trade-off, not a fault.
    Info,
    /// Will hurt on a bad day.
    Warning,
    /// Loses messages or is about to.
    Critical,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Critical => "critical",
        })
    }
}

/// Something wrong (or worth knowing) about a queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Finding {
    /// The check's id, e.g. `dlq-retention`.
    pub check: &'static str,
    /// How bad.
    pub severity: Severity,
    /// The queue concerned.
    pub queue: String,
    /// What is wrong and why.
    pub problem: String,
    /// What to do.
    pub fix: String,
}

/// A check that could not run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Skipped {
    /// The check's id.
    pub check: &'static str,
    /// Why it did not run.
    pub reason: String,
}

/// The outcome of every check.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Report {
    /// Findings, worst first.
    pub findings: Vec<Finding>,
    /// Checks that could not run.
    pub skipped: Vec<Skipped>,
}

impl Report {
    pub(super) fn add(
        &mut self,
        check: &'static str,
        severity: Severity,
        queue: &str,
        problem: String,
        fix: String,
    ) {
        self.findings.push(Finding {
            check,
            severity,
            queue: queue.to_string(),
            problem,
            fix,
        });
    }

    pub(super) fn skip(&mut self, check: &'static str, reason: &str) {
        self.skipped.push(Skipped {
            check,
            reason: reason.to_string(),
        });
    }

    /// The worst severity found, if any.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}
