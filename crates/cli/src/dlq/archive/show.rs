//! `dlq archive show`: one archived message whole, with where it came
//! from and what happened to it (rules X2, X8).

use serde::Serialize;

use super::request::{MAX_PAGE, archive_queue_url, list_request};
use crate::admin::{out, outln, print_json};
use crate::dlq::args::ArchiveShowArgs;
use crate::dlq::browse::{
    Provenance as DeadLetterProvenance, provenance_fields, render_attributes_and_body,
};
use crate::dlq::filter::MessageFilter;
use crate::inventory::name_of;
use crate::table::unsigned;
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

/// Where an archived message came from and what happened to it (X2, X8):
/// a dead-lettered message's provenance, and its archive's times.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Provenance {
    /// Its dead-letter provenance (the source queue when it was one).
    #[serde(flatten)]
    dead_letter: DeadLetterProvenance,
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
        Self {
            dead_letter: DeadLetterProvenance::of(provenance_fields!(m)),
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
    p.dead_letter.render("Moved to its queue", &mut line);
    render_attributes_and_body(
        &mut out,
        &m.message_attributes,
        &m.attributes,
        m.body.as_deref(),
    );
    out
}
