//! What the operator commands (`dlq`, `doctor`, `stats`, `alarms`,
//! `backup`) share:
//! the endpoint and credential flags, the async runtime, JSON output and
//! exit codes.

use std::future::Future;
use std::io::Write;

use clap::Args;

use sluice_client::{Client, ClientOptions, ConnectionFlags};

/// The default endpoint, where `sluice serve` listens by default.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:9324";

/// Where the server is, and what to sign with.
#[derive(Args, Debug, Clone)]
pub struct Connection {
    /// URL of the sluice server (the same one SQS clients use; http:// or https://).
    #[arg(
        long,
        global = true,
        env = "SLUICE_ENDPOINT",
        default_value = DEFAULT_ENDPOINT,
        value_name = "URL"
    )]
    pub endpoint: String,

    /// Credentials, region and CA file.
    #[command(flatten)]
    pub flags: ConnectionFlags,
}

impl Connection {
    /// A client for the endpoint, signing with the credentials the flags,
    /// the environment or the shared AWS files give (unsigned without).
    pub fn client(&self) -> anyhow::Result<Client> {
        self.client_with_timeout(ClientOptions::default().request_timeout)
    }

    /// [`Connection::client`] for requests that may take up to `timeout`.
    pub fn client_with_timeout(&self, timeout: std::time::Duration) -> anyhow::Result<Client> {
        let options = ClientOptions {
            signing: self.flags.signing()?,
            ca_file: self.flags.ca_file.clone(),
            request_timeout: timeout,
            ..ClientOptions::default()
        };
        Ok(Client::new(&self.endpoint, &options)?)
    }
}

/// Exit code of a command that failed (SQS error, unreachable server, bad
/// input found after parsing).
pub const EXIT_ERROR: u8 = 1;

/// Runs an operator command to completion and exits the process: with the
/// command's exit code, or after printing `error: …` on stderr with
/// `error_code` (`doctor` keeps 1 for "findings", so its errors use 2).
pub fn finish<F>(command: F, error_code: u8) -> !
where
    F: Future<Output = anyhow::Result<u8>>,
{
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|rt| rt.block_on(command));
    let code = match outcome {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => 0,
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("error: {e:#}");
            error_code
        }
    };
    let _ = std::io::stdout().flush();
    std::process::exit(i32::from(code))
}

/// Whether the error is a write to a closed stdout (`| head`).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

/// Prints one JSON document on stdout.
pub fn print_json(value: &impl serde::Serialize) {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    write_out(format_args!("{text}\n"));
}

/// Writes to stdout. When stdout was closed (`sluice dlq peek … | head`),
/// the command ends quietly instead of panicking like `print!` does.
pub fn write_out(text: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(text)
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(0);
    }
}

/// `print!` through [`write_out`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::admin::write_out(format_args!($($arg)*)) };
}

/// `println!` through [`write_out`].
macro_rules! outln {
    () => { $crate::admin::write_out(format_args!("\n")) };
    ($($arg:tt)*) => {{
        $crate::admin::write_out(format_args!($($arg)*));
        $crate::admin::write_out(format_args!("\n"));
    }};
}

pub(crate) use {out, outln};
