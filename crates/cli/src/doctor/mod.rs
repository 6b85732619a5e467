//! `sluice doctor` (rule X5): checks every queue of a running
//! server, or of a config file, against the pitfalls of the seed documents.

mod checks;
mod report;
mod setup;
mod snapshot;

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::admin::{Connection, out, print_json};
use report::{Finding, Report, Severity, Skipped};

/// Exit code when a finding reaches `--fail-on`.
const EXIT_FINDINGS: u8 = 1;

/// Exit code of usage and connection errors.
pub const EXIT_ERROR: u8 = 2;

/// `sluice doctor`.
#[derive(Args, Debug)]
#[command(after_help = "\
Checks (docs/doctor.md has the why and the fix of each):
  dlq-missing         a RedrivePolicy names a queue that does not exist   critical
  dlq-retention       DLQ retention not longer than a source's            critical/warning/info
  max-receive-count   maxReceiveCount of 1, or above 10                   warning
  redrive-policy      a queue (not a DLQ) without a RedrivePolicy         warning
  visibility-timeout  VisibilityTimeout under 6x the consumer timeout     critical/warning
                      (declared in the queue tag sluice:consumer-timeout-seconds)
  fifo-ordering       a FIFO queue with a DLQ loses order for moved ones  info
  dlq-alarm           a DLQ without a depth alarm (live; skipped when     warning
                      the server has no Sluice.DescribeAlarms)
  dlq-expiring        a DLQ message expires within a day (live)           critical/warning
  inflight-limit      in flight near the 120,000 limit (live)             critical/warning
  consumer-visibility     a push consumer's queue: VisibilityTimeout      critical/warning
                          under 6x timeout_seconds + batching window
  consumer-batch-failures batches over 1 without                          warning
                          report_batch_item_failures
  consumer-dlq            a push consumer's queue without a DLQ           warning
  sse-unsealed        a queue asks for SSE on a server without a keyring  warning
                      (read from the server's /metrics)
  sse-key-missing     a queue's KmsMasterKeyId is not in the keyring      critical
                      (live)
  sse-aws-managed-key KmsMasterKeyId alias/aws/sqs on a queue that SNS,   warning
                      EventBridge or S3 deliver to (AWS cannot)

Exit status: 0 no finding at or above --fail-on, 1 findings, 2 usage or connection error.")]
pub struct DoctorArgs {
    #[command(flatten)]
    connection: Connection,
    /// Check the [[queues]] of this sluice config file instead of a running
    /// server (the checks that need live data are skipped).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Exit with 1 when a finding is at least this severe.
    #[arg(long, value_enum, default_value_t = FailOn::Warning, value_name = "SEVERITY")]
    fail_on: FailOn,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
}

/// The severity that fails the run.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum FailOn {
    /// Any finding.
    Info,
    /// Warnings and critical findings.
    Warning,
    /// Critical findings only.
    Critical,
}

impl FailOn {
    fn severity(self) -> Severity {
        match self {
            Self::Info => Severity::Info,
            Self::Warning => Severity::Warning,
            Self::Critical => Severity::Critical,
        }
    }
}

/// `doctor --json`.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Document<'a> {
    source: &'a str,
    queues_checked: usize,
    findings: &'a [Finding],
    skipped: &'a [Skipped],
    fail_on: Severity,
    failed: bool,
}

/// Runs the checks; returns the exit code.
pub async fn run(args: DoctorArgs) -> anyhow::Result<u8> {
    let (source, setup) = match &args.config {
        Some(path) => (path.display().to_string(), snapshot::from_config(path)?),
        None => {
            let client = args.connection.client()?;
            (
                args.connection.endpoint.clone(),
                snapshot::live(&client).await?,
            )
        }
    };
    let report = checks::check(&setup);
    let failed = report.worst().is_some_and(|w| w >= args.fail_on.severity());
    if args.json {
        print_json(&Document {
            source: &source,
            queues_checked: setup.queues.len(),
            findings: &report.findings,
            skipped: &report.skipped,
            fail_on: args.fail_on.severity(),
            failed,
        });
    } else {
        out!("{}", render(&source, setup.queues.len(), &report));
    }
    Ok(if failed { EXIT_FINDINGS } else { 0 })
}

fn render(source: &str, queues: usize, report: &Report) -> String {
    let mut out = format!("checked {queues} queue(s) of {source}\n");
    for f in &report.findings {
        out.push_str(&format!(
            "\n{:<8}  {}  [{}]\n  {}\n  fix: {}\n",
            f.severity.to_string().to_uppercase(),
            f.queue,
            f.check,
            f.problem,
            f.fix
        ));
    }
    if !report.skipped.is_empty() {
        out.push('\n');
    }
    for s in &report.skipped {
        out.push_str(&format!("skipped [{}]: {}\n", s.check, s.reason));
    }
    let count = |sev| report.findings.iter().filter(|f| f.severity == sev).count();
    out.push_str(&format!(
        "\n{} finding(s): {} critical, {} warning, {} info\n",
        report.findings.len(),
        count(Severity::Critical),
        count(Severity::Warning),
        count(Severity::Info)
    ));
    out
}
