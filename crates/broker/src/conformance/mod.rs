//! The behaviour every engine must show, written once against [`Broker`].
//!
//! Each function is one test and names the rule of SEMANTICS.md it proves:
//! standard-queue behaviour in `standard`, FIFO in `fifo`, dead-letter
//! queues, redrive and sluice's own DLQ tools in `dead_letter`, SNS topics
//! and subscriptions as engines store them in `topics`, consumers'
//! idempotency records in `idempotency`, every way into a queue at once
//! in `paths`.
//! Engines instantiate the suite with [`conformance_tests!`](crate::conformance_tests),
//! giving an expression that builds a fresh [`Harness`] per test. Time-based
//! rules use the harness's manual clock; no test sleeps to prove a timeout
//! except the long-poll ones, which say so in their names and stay short.

use std::collections::BTreeMap;
use std::time::Duration;

use sluice_core::ManualClock;
use sluice_core::attributes::QueueConfig;
use sluice_core::message::{AttributeValue, MessageAttributeValue};

use crate::{Broker, CreateQueue, NewMessage, QueueCounts, ReceiveOptions, ReceivedMessage};

/// A fresh engine and the manual clock it reads.
pub trait Harness: Send + Sync + 'static {
    /// The engine under test.
    type B: Broker;
    /// The engine.
    fn broker(&self) -> &Self::B;
    /// Its clock.
    fn clock(&self) -> &ManualClock;
}

/// Generates one `#[tokio::test]` per conformance test for an engine.
///
/// `$make` is an expression that evaluates to a new [`Harness`].
#[macro_export]
macro_rules! conformance_tests {
    ($make:expr) => {
        $crate::conformance_tests!(@each $make;
            v1_send_then_receive_returns_what_was_sent,
            v1_delay_hides_a_message_until_due,
            v2_receive_hides_for_the_visibility_timeout_and_counts,
            v3_a_message_not_deleted_comes_back,
            v4_delete_with_any_handle_and_twice,
            v4_bad_handles_are_invalid,
            v5_change_visibility_extends_and_zero_releases,
            v5_change_visibility_needs_an_in_flight_message,
            v20_change_visibility_after_the_visibility_ended,
            v26_visibility_ends_twelve_hours_after_the_receive,
            v6_long_poll_wakes_on_send_real_time,
            v6_long_poll_ends_empty_at_deadline_real_time,
            v7_retention_deletes_old_messages,
            v8_purge_deletes_all_and_limits_rate,
            v9_create_is_idempotent_and_delete_frees_the_name,
            v13_create_names_the_differing_attribute,
            v11_counts_follow_the_lifecycle,
            v11_set_attributes_and_tags,
            a6_queue_policy_is_the_policy_set,
            l2_batch_results_are_per_entry,
            r2_r4_message_moves_to_dlq_past_max_receive_count,
            r2_max_receive_count_one,
            r14_dead_letter_keeps_the_trace_header,
            r2_without_its_dlq_a_message_stays,
            r12_a_queue_that_is_its_own_dlq_keeps_delivering,
            r10_missing_destination_is_named_by_its_code,
            r3_standard_dlq_keeps_the_original_enqueue_time,
            f1_order_within_a_group_and_blocking,
            f1_redelivery_keeps_group_order,
            f1_fifo_stale_handle_cannot_delete,
            f13_a_visible_head_reopens_its_group,
            f13_a_message_kept_in_flight_stops_its_group,
            f13_deleting_the_head_opens_the_group_only_when_the_next_is_visible,
            f14_released_groups_go_behind_waiting_ones,
            f11_purge_ends_the_deduplication_window,
            f12_deduplication_scope_is_the_one_given_at_creation,
            f16_sequence_numbers_look_like_sqs,
            m1_fifo_groups_in_flight_and_deduplicated_sends,
            f2_deduplication_window_outlives_delete,
            f2_deduplication_scope_message_group,
            f2_duplicates_within_one_batch_answer_as_the_first,
            f3_sequence_numbers_increase,
            f4_receive_attempt_id_replays,
            r3_fifo_dlq_resets_enqueue_time,
            v10_fair_queue_serves_oldest_first_while_no_tenant_is_noisy,
            v10_fair_queue_tenant_with_forty_in_flight_waits_behind_quiet_ones,
            v10_fair_queue_flooding_tenant_does_not_starve_others,
            v10_fair_queue_noisy_tenant_quiet_again_after_five_silent_minutes,
            v10_fair_queue_metrics_count_noisy_and_quiet_tenants,
            r7_redrive_returns_messages_to_their_sources,
            r7_redrive_to_a_destination_in_steps,
            r7_unmovable_messages_stay,
            r7_move_tasks_are_kept,
            x1_peek_changes_nothing_and_filters,
            x2_nack_reason_retry_and_permanent_failure,
            x7_each_failure_class_reaches_its_own_dlq_after_its_own_count,
            x7_permanent_failures_and_a_missing_route_dlq,
            x7_a_fix_replays_only_its_class,
            x8_expired_messages_wait_for_the_archive,
            x8_purge_and_delete_take_what_waits_for_the_archive,
            x3_selective_redrive_filters_marks_and_bounds_replays,
            x_retry_backoff_doubles_each_attempt_up_to_the_cap,
            x_retry_backoff_jitter_nack_and_removal,
            v12_thrice_received_message_goes_to_the_back,
            r2_r7_dead_letter_queue_chain,
            x1_peek_racing_receives_changes_nothing,
            v1_r2_r7_every_way_in_while_consumers_drain,
            w3_regional_queues_and_their_dead_letter_queues,
            a3_handle_secret_is_stable,
            n1_create_topic_is_idempotent_per_key,
            n1_topics_are_listed_sorted_and_deleted,
            n1_a_missing_topic_is_topic_does_not_exist,
            n1_update_topic_applies_the_change_and_keeps_it,
            n1_a_refused_topic_change_stores_nothing,
            n1_concurrent_topic_changes_are_all_kept,
            n1_subscribe_is_idempotent_per_protocol_and_endpoint,
            n1_concurrent_subscribes_store_one_subscription,
            n1_subscribe_needs_its_topic,
            n1_get_update_and_delete_a_subscription,
            n1_an_update_keeps_what_identifies_a_record,
            n1_deleting_a_topic_deletes_its_subscriptions,
            n1_subscriptions_are_listed_oldest_first_ties_by_id,
            i1_a_key_is_claimed_once_and_completed_with_its_result,
            i1_release_frees_a_key_and_a_timed_out_claim_is_taken_over,
            i1_concurrent_claims_of_a_key_claim_it_once,
        );
    };
    // The in-flight limit needs 120,000 sequential receives: engines whose
    // every receive is a durable commit run it through this arm separately.
    (heavy $make:expr) => {
        $crate::conformance_tests!(@each $make;
            l4_in_flight_limit_is_over_limit,
            l4_fifo_in_flight_limit_is_an_empty_receive,
        );
    };
    (@each $make:expr; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let harness = $make;
                $crate::conformance::$name(&harness).await;
            }
        )*
    };
}

mod archive;
mod dead_letter;
mod failure_classes;
mod fair;
mod fifo;
mod idempotency;
mod paths;
mod regions;
mod retries;
mod standard;
mod topics;

pub use archive::*;
pub use dead_letter::*;
pub use failure_classes::*;
pub use fair::*;
pub use fifo::*;
pub use idempotency::*;
pub use paths::*;
pub use regions::*;
pub use retries::*;
pub use standard::*;
pub use topics::*;

pub(crate) fn attrs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub(crate) async fn create<H: Harness>(h: &H, name: &str, pairs: &[(&str, &str)]) {
    let requested = attrs(pairs);
    let config = QueueConfig::for_create(name, &requested).expect("valid attributes");
    h.broker()
        .create_queue(CreateQueue {
            name: name.into(),
            config,
            requested,
            tags: BTreeMap::new(),
        })
        .await
        .expect("create queue");
}

pub(crate) fn msg(body: &str) -> NewMessage {
    NewMessage {
        body: body.into(),
        ..Default::default()
    }
}

pub(crate) async fn send<H: Harness>(h: &H, q: &str, bodies: &[&str]) -> Vec<String> {
    h.broker()
        .send_messages(q, bodies.iter().map(|b| msg(b)).collect())
        .await
        .expect("send")
        .into_iter()
        .map(|s| s.message_id)
        .collect()
}

pub(crate) fn opts(max: u32) -> ReceiveOptions {
    ReceiveOptions {
        max_messages: max,
        visibility_timeout: None,
        wait: Duration::ZERO,
        attempt_id: None,
    }
}

pub(crate) async fn receive<H: Harness>(h: &H, q: &str, max: u32) -> Vec<ReceivedMessage> {
    h.broker()
        .receive_messages(q, opts(max))
        .await
        .expect("receive")
}

pub(crate) async fn receive_vt<H: Harness>(
    h: &H,
    q: &str,
    max: u32,
    vt: u32,
) -> Vec<ReceivedMessage> {
    let mut o = opts(max);
    o.visibility_timeout = Some(vt);
    h.broker().receive_messages(q, o).await.expect("receive")
}

pub(crate) async fn counts<H: Harness>(h: &H, q: &str) -> QueueCounts {
    h.broker().queue_counts(q).await.expect("counts")
}

pub(crate) fn bodies(msgs: &[ReceivedMessage]) -> Vec<String> {
    let mut b: Vec<String> = msgs.iter().map(|m| m.body.clone()).collect();
    b.sort();
    b
}

pub(crate) fn redrive(dlq: &str, max: u32) -> String {
    format!(
        r#"{{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:{dlq}","maxReceiveCount":{max}}}"#
    )
}

pub(crate) fn fifo_msg(group: &str, dedup: &str, body: &str) -> NewMessage {
    NewMessage {
        body: body.into(),
        group_id: Some(group.into()),
        dedup_id: Some(dedup.into()),
        ..Default::default()
    }
}

pub(crate) async fn create_fifo<H: Harness>(h: &H, name: &str, extra: &[(&str, &str)]) {
    let mut pairs = vec![("FifoQueue", "true")];
    pairs.extend_from_slice(extra);
    create(h, name, &pairs).await;
}

pub(crate) fn in_order(msgs: &[ReceivedMessage]) -> Vec<&str> {
    msgs.iter().map(|m| m.body.as_str()).collect()
}

pub(crate) async fn dead_letter<H: Harness>(h: &H, source: &str, body: &str) {
    send(h, source, &[body]).await;
    assert_eq!(receive_vt(h, source, 1, 0).await.len(), 1);
    assert!(
        receive(h, source, 1).await.is_empty(),
        "{body} moved to the DLQ"
    );
}

pub(crate) fn with_attr(body: &str, name: &str, value: &str) -> NewMessage {
    let mut m = msg(body);
    m.attributes.insert(
        name.into(),
        MessageAttributeValue {
            data_type: "String".into(),
            value: AttributeValue::String(value.into()),
        },
    );
    m
}

#[cfg(test)]
mod listed {
    /// Every conformance function is instantiated by the macro, and the
    /// macro names no function that does not exist: a test written but
    /// never listed would otherwise pass by never running.
    #[test]
    fn the_macro_lists_every_conformance_test() {
        let sources = [
            include_str!("mod.rs"),
            include_str!("archive.rs"),
            include_str!("dead_letter.rs"),
            include_str!("failure_classes.rs"),
            include_str!("fair.rs"),
            include_str!("fifo.rs"),
            include_str!("idempotency.rs"),
            include_str!("paths.rs"),
            include_str!("regions.rs"),
            include_str!("retries.rs"),
            include_str!("standard.rs"),
            include_str!("topics.rs"),
        ];
        let mut defined: Vec<&str> = sources
            .iter()
            .flat_map(|src| src.lines())
            .filter_map(|line| line.trim().strip_prefix("pub async fn "))
            .filter_map(|rest| rest.split(['<', '(']).next())
            .collect();
        let mac = sources[0];
        let mut listed: Vec<&str> = mac
            .split("$crate::conformance_tests!(@each $make;")
            .skip(1)
            .flat_map(|arm| arm.split(')').next().unwrap_or_default().split(','))
            .map(str::trim)
            // (This test's own copy of the marker yields no identifier.)
            .filter(|name| {
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
            .collect();
        defined.sort_unstable();
        listed.sort_unstable();
        assert_eq!(listed, defined);
    }
}
