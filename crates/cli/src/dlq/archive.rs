//! `dlq archive list`, `show` and `restore` (rule X8): the archive of a
//! queue's expired messages, kept by `sluice serve --archive-dir` for
//! queues with SluiceArchiveExpired=true, read with ListArchivedMessages
//! and sent back with RestoreArchivedMessages.

mod request;
mod show;

use serde::Serialize;

use super::args::{ArchiveArgs, ArchiveCommand, ArchiveListArgs, ArchiveRestoreArgs};
use super::filter::MessageFilter;
use crate::admin::{out, outln, print_json};
use crate::inventory::name_of;
use crate::table::{Table, or_null, shorten, unsigned};
use crate::timefmt::rfc3339;
use request::{MAX_PAGE, archive_queue_url, is_missing_queue, list_request};
use sluice_client::Client;
use sluice_client::sluice::{
    ArchivedMessage, ListArchivedMessagesRequest, RestoreArchivedMessagesRequest,
    RestoreArchivedMessagesResult,
};

/// Most messages one RestoreArchivedMessages restores (the server's cap,
/// with or without MessageIds).
const MAX_RESTORE: usize = 10_000;

/// Runs a `dlq archive` command; returns the exit code.
pub async fn run(client: &Client, args: ArchiveArgs) -> anyhow::Result<u8> {
    match args.command {
        ArchiveCommand::List(a) => list(client, a).await,
        ArchiveCommand::Show(a) => show::show(client, a).await,
        ArchiveCommand::Restore(a) => restore(client, a).await,
    }
}

/// Up to `limit` matching archived messages, page after page, and whether
/// more match.
async fn archived_messages(
    client: &Client,
    url: &str,
    filter: &MessageFilter,
    limit: usize,
) -> anyhow::Result<(Vec<ArchivedMessage>, bool)> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let want = (limit - out.len()).clamp(1, MAX_PAGE);
        let input = ListArchivedMessagesRequest {
            max_results: Some(want as i64),
            next_token: token.take(),
            ..list_request(filter, url)
        };
        let page = client.call(&input).await?;
        out.extend(page.messages);
        if out.len() >= limit {
            let more = out.len() > limit || page.next_token.is_some();
            out.truncate(limit);
            return Ok((out, more));
        }
        match page.next_token {
            Some(t) => token = Some(t),
            None => return Ok((out, false)),
        }
    }
}

/// `dlq archive list --json`: the messages as the server gave them.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Listed<'a> {
    messages: &'a [ArchivedMessage],
}

/// A time of the table, to the second.
fn table_time(ms: Option<i64>) -> String {
    unsigned(ms)
        .filter(|&t| t > 0)
        .map(|t| rfc3339(t - t % 1000).replace(".000Z", "Z"))
        .unwrap_or_default()
}

/// `dlq archive list`.
async fn list(client: &Client, args: ArchiveListArgs) -> anyhow::Result<u8> {
    let url = archive_queue_url(client, &args.queue).await?;
    let filter = args.filter.to_input(client).await?;
    let (messages, more) = archived_messages(client, &url, &filter, args.max as usize).await?;
    if args.json {
        print_json(&Listed {
            messages: &messages,
        });
        return Ok(0);
    }
    if messages.is_empty() {
        outln!("no matching archived messages of {}", name_of(&url));
        return Ok(0);
    }
    // FIFO queues: show the group, which decided the order.
    let grouped = messages.iter().any(|m| m.message_group_id.is_some());
    let mut columns = vec![
        "MESSAGE ID",
        "SENT",
        "ARCHIVED",
        "RECEIVES>",
        "CLASS",
        "RESTORED",
        "BODY",
    ];
    if grouped {
        columns.insert(1, "GROUP");
    }
    let mut table = Table::new(&columns);
    for m in &messages {
        let mut row = vec![
            m.message_id.clone().unwrap_or_default(),
            table_time(m.sent_timestamp),
            table_time(m.archived_timestamp),
            or_null(m.receive_count),
            m.failure_class.clone().unwrap_or_else(|| "-".into()),
            table_time(m.restored_timestamp),
            shorten(m.body.as_deref().unwrap_or(""), 50),
        ];
        if grouped {
            row.insert(1, shorten(m.message_group_id.as_deref().unwrap_or("-"), 20));
        }
        table.row(row);
    }
    out!("{}", table.render());
    if more {
        outln!(
            "(first {} shown: --max N for more, or narrow with the filters)",
            messages.len()
        );
    }
    Ok(0)
}

/// `dlq archive restore`.
async fn restore(client: &Client, args: ArchiveRestoreArgs) -> anyhow::Result<u8> {
    let url = archive_queue_url(client, &args.queue).await?;
    let destination = match &args.to {
        Some(q) => Some(
            client
                .queue_url(q)
                .await
                .map_err(|e| anyhow::anyhow!("--to {q}: {e}"))?,
        ),
        None => None,
    };
    let request = |ids: Option<Vec<String>>| RestoreArchivedMessagesRequest {
        queue_url: Some(url.clone()),
        message_ids: ids,
        destination_queue_url: destination.clone(),
    };
    let mut total = RestoreArchivedMessagesResult::default();
    // A restore to the queue itself needs the queue: once it is deleted,
    // its archive can only go elsewhere.
    let call = async |input: RestoreArchivedMessagesRequest| {
        client.call(&input).await.map_err(|e| match &args.to {
            None if is_missing_queue(&e) => anyhow::anyhow!(
                "{e} ({} was deleted? restore its archive to another queue with --to QUEUE)",
                args.queue
            ),
            _ => e.into(),
        })
    };
    let mut add = |out: RestoreArchivedMessagesResult| {
        let restored = out.restored.unwrap_or(out.message_ids.len() as i64);
        total.restored = Some(total.restored.unwrap_or(0) + restored);
        total.message_ids.extend(out.message_ids);
        total.not_found.extend(out.not_found);
        restored
    };
    if args.ids.is_empty() {
        // The server restores at most MAX_RESTORE a call; those it restored
        // are marked, so the next call goes on with the rest.
        while add(call(request(None)).await?) >= MAX_RESTORE as i64 {}
    } else {
        for chunk in args.ids.chunks(MAX_RESTORE) {
            add(call(request(Some(chunk.to_vec()))).await?);
        }
    }
    let code = u8::from(!total.not_found.is_empty());
    if args.json {
        print_json(&total);
        return Ok(code);
    }
    let from = name_of(&url);
    let to = destination.as_deref().map_or(from, name_of);
    let restored = total.restored.unwrap_or(0);
    if restored == 0 {
        let why = if args.ids.is_empty() {
            " (no archived message left that was never restored; --id restores one again)"
        } else {
            ""
        };
        outln!("restored nothing from the archive of {from}{why}");
    } else {
        outln!(
            "restored {restored} message(s) from the archive of {from} to {to} (same message \
             ids, one more replay each):"
        );
    }
    for id in &total.message_ids {
        outln!("  {id}");
    }
    if !total.not_found.is_empty() {
        outln!(
            "not found in the archive of {from}: {} message(s):",
            total.not_found.len()
        );
        for id in &total.not_found {
            outln!("  {id}");
        }
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_times_are_to_the_second() {
        assert_eq!(table_time(Some(1_500)), "1970-01-01T00:00:01Z");
        assert_eq!(table_time(None), "");
    }
}
