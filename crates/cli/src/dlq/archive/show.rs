//! `dlq archive show`: one archived message whole, with where it came
//! from and what happened to it (rules X2, X8).

use serde::Serialize;

use super::request::{MAX_PAGE, archive_queue_url, list_request};
use crate::admin::{out, outln, print_json};
use crate::dlq::args::ArchiveShowArgs;
use crate::dlq::browse::{REPLAY_COUNT, render_attributes_and_body};
use crate::dlq::filter::MessageFilter;
use crate::inventory::name_of;
use crate::table::{or_null, unsigned};
use crate::timefmt::rfc3339;
use sluice_client::Client;
use sluice_client::sluice::{ArchivedMessage, ListArchivedMessagesRequest};

/// `dlq archive show --json`.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Shown<'a> {
    queue_url: &'a str,
    message: &'a ArchivedMessage,
    provenance: &'a Provenance,
    /// Times the message was archived: a restored message that expires
    /// again is archived again, under the same id.
    times_archived: usize,
}

/// `dlq archive show`: finds the message by id (ListArchivedMessages has
/// no id filter, so this pages through the archive). A message restored
/// and expired again is archived once more under its id: the latest copy
/// is shown, the one a restore by id sends back.
pub(super) async fn show(client: &Client, args: ArchiveShowArgs) -> anyhow::Result<u8> {
    let url = archive_queue_url(client, &args.queue).await?;
    let mut token: Option<String> = None;
    let mut found: Option<ArchivedMessage> = None;
    let mut times = 0;
    loop {
        let input = ListArchivedMessagesRequest {
            max_results: Some(MAX_PAGE as i64),
            next_token: token.take(),
            ..list_request(&MessageFilter::default(), &url)
        };
        let page = client.call(&input).await?;
        for m in page.messages {
            if m.message_id.as_deref() == Some(args.message_id.as_str()) {
                times += 1;
                // Oldest first: a later copy is a later archiving.
                found = Some(m);
            }
        }
        match page.next_token {
            Some(t) => token = Some(t),
            None => break,
        }
    }
    let Some(message) = found else {
        anyhow::bail!(
            "MessageNotFound: no message {} in the archive of {} (archived messages are \
             those of queues with SluiceArchiveExpired=true that reached their retention)",
            args.message_id,
            name_of(&url)
        );
    };
    let provenance = Provenance::of(&message);
    if args.json {
        print_json(&Shown {
            queue_url: &url,
            message: &message,
            provenance: &provenance,
            times_archived: times,
        });
        return Ok(0);
    }
    out!("{}", render_message(&message, &provenance));
    if times > 1 {
        outln!("(archived {times} times, restored and expired again: the latest is shown)");
    }
    Ok(0)
}

/// Where an archived message came from and what happened to it (X2, X8).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Provenance {
    /// The queue it was dead-lettered from, when it was.
    source_queue_arn: Option<String>,
    /// When it was moved to the queue it expired in, ms.
    moved_at: Option<u64>,
    /// Times it was received.
    receive_count: Option<i64>,
    /// Its first receive, ms.
    first_receive_at: Option<u64>,
    /// Its last receive, ms.
    last_receive_at: Option<u64>,
    /// Why its consumer last gave it up (NackMessage).
    last_failure_reason: Option<String>,
    /// The class of its last classified failure (NackMessage).
    failure_class: Option<String>,
    /// Times it was replayed (selective redrive or restore) before it
    /// expired.
    replay_count: u64,
    /// When it was archived, ms.
    archived_at: Option<u64>,
    /// When it was last restored, ms; none while never restored.
    restored_at: Option<u64>,
}

impl Provenance {
    /// The provenance of `m`: its own members, else the `Sluice.*`
    /// attributes a dead-lettered message carries.
    fn of(m: &ArchivedMessage) -> Self {
        let ms = |v: Option<u64>| v.filter(|&t| t > 0);
        let attribute = |name: &str| m.attributes.get(name).cloned();
        let millis = |name: &str| m.attributes.get(name).and_then(|v| v.parse().ok());
        Self {
            source_queue_arn: attribute("DeadLetterQueueSourceArn"),
            moved_at: ms(millis("Sluice.MovedAt")),
            receive_count: m.receive_count,
            first_receive_at: ms(
                unsigned(m.first_receive_timestamp).or_else(|| millis("Sluice.FirstReceiveAt"))
            ),
            last_receive_at: ms(
                unsigned(m.last_receive_timestamp).or_else(|| millis("Sluice.LastReceiveAt"))
            ),
            last_failure_reason: (m.failure_reason.clone())
                .or_else(|| attribute("Sluice.LastFailureReason")),
            failure_class: (m.failure_class.clone()).or_else(|| attribute("Sluice.FailureClass")),
            replay_count: (m.message_attributes.get(REPLAY_COUNT))
                .and_then(|a| a.string_value.as_deref())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            archived_at: ms(unsigned(m.archived_timestamp)),
            restored_at: ms(unsigned(m.restored_timestamp)),
        }
    }
}

fn render_message(m: &ArchivedMessage, p: &Provenance) -> String {
    let time = |v: Option<u64>| v.map(rfc3339).unwrap_or_else(|| "-".into());
    let text = |v: Option<&str>| v.unwrap_or("-").to_string();
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k:<22}{v}\n"));
    line("Message id", text(m.message_id.as_deref()));
    line("Sent", time(unsigned(m.sent_timestamp)));
    line("Archived", time(p.archived_at));
    line("Restored", p.restored_at.map_or("never".into(), rfc3339));
    if let Some(g) = &m.message_group_id {
        line("Message group", g.clone());
    }
    if let Some(d) = &m.message_deduplication_id {
        line("Deduplication id", d.clone());
    }
    line(
        "Source queue",
        p.source_queue_arn
            .as_deref()
            .map_or("-".into(), |a| format!("{} ({a})", name_of(a))),
    );
    line("Moved to its queue", time(p.moved_at));
    line("Receive count", or_null(p.receive_count));
    line("First receive", time(p.first_receive_at));
    line("Last receive", time(p.last_receive_at));
    line(
        "Last failure reason",
        text(p.last_failure_reason.as_deref()),
    );
    line("Failure class", text(p.failure_class.as_deref()));
    line("Replay count", p.replay_count.to_string());
    render_attributes_and_body(
        &mut out,
        &m.message_attributes,
        &m.attributes,
        m.body.as_deref(),
    );
    out
}
