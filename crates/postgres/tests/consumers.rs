//! What nodes share of push consumers, with two engines on one database
//! and one manual clock as two nodes: the consumers created at run time
//! (rule C9) and the leased delivery slots that hold `max_concurrency`
//! across nodes (rule C14). Without PostgreSQL's binaries every test says
//! SKIPPED and passes (with SLUICE_REQUIRE_POSTGRES=1 it fails).

use std::sync::Arc;

use sluice_broker::{Coordination, StoredConsumer};
use sluice_core::ManualClock;
use sluice_postgres::{PostgresBroker, PostgresOptions, testing};

/// Two nodes on a fresh database reading the same clock.
async fn two_nodes() -> Option<(PostgresBroker, PostgresBroker, ManualClock)> {
    let url = testing::cluster()?.fresh_database().await;
    let clock = ManualClock::default();
    let node = || async {
        let options = PostgresOptions {
            pool_size: 4,
            ..Default::default()
        };
        PostgresBroker::connect(&url, Arc::new(clock.clone()), options)
            .await
            .expect("connect to the test database")
    };
    let (a, b) = (node().await, node().await);
    Some((a, b, clock))
}

fn consumer(name: &str, batch_size: u32) -> StoredConsumer {
    StoredConsumer {
        name: name.into(),
        definition: format!(r#"{{"batch_size": {batch_size}}}"#),
    }
}

/// C9: a consumer stored through one node is read through the other; a
/// name is stored once; an update or delete of a missing name changes
/// nothing and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c9_run_time_consumers_are_shared() {
    let Some((a, b, _)) = two_nodes().await else {
        return;
    };
    assert_eq!(b.stored_consumers().await.unwrap(), Vec::new());
    assert!(a.insert_stored_consumer(consumer("w", 1)).await.unwrap());
    assert!(
        !b.insert_stored_consumer(consumer("w", 2)).await.unwrap(),
        "the name is taken"
    );
    let seen = b.stored_consumers().await.unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].name, "w");
    let def: serde_json::Value = serde_json::from_str(&seen[0].definition).unwrap();
    assert_eq!(def["batch_size"], 1, "the first insert kept");
    assert!(b.update_stored_consumer(consumer("w", 3)).await.unwrap());
    let def: serde_json::Value =
        serde_json::from_str(&a.stored_consumers().await.unwrap()[0].definition).unwrap();
    assert_eq!(def["batch_size"], 3);
    assert!(!a.update_stored_consumer(consumer("nope", 1)).await.unwrap());
    assert!(a.delete_stored_consumer("w".into()).await.unwrap());
    assert!(!b.delete_stored_consumer("w".into()).await.unwrap());
    assert_eq!(b.stored_consumers().await.unwrap(), Vec::new());
}

/// C14: of a consumer's 2 slots, the two nodes lease 2 and no more; a
/// released slot is claimed again; a lease renewed stays held past its
/// first term; one not renewed (its node died) ends and is claimed over,
/// and the dead node's late renewal and release then touch nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c14_slots_are_leased_across_nodes() {
    let Some((a, b, clock)) = two_nodes().await else {
        return;
    };
    let claim = |node: &PostgresBroker| {
        let node = node.clone();
        async move {
            node.claim_consumer_slot("w".into(), 2, 10_000)
                .await
                .unwrap()
        }
    };
    let first = claim(&a).await.expect("a slot");
    let second = claim(&b).await.expect("another slot");
    assert_ne!(first.slot, second.slot);
    assert!(first.slot < 2 && second.slot < 2);
    assert_eq!(claim(&a).await, None, "both slots held");
    assert_eq!(claim(&b).await, None, "both slots held");
    // Another consumer's slots are its own.
    assert!(
        b.claim_consumer_slot("other".into(), 2, 10_000)
            .await
            .unwrap()
            .is_some()
    );

    b.release_consumer_slot(second.clone()).await.unwrap();
    let again = claim(&a).await.expect("the released slot");
    assert_eq!(again.slot, second.slot);

    // `first` is renewed; `again` (A's too, say A died) is not.
    clock.advance_ms(6_000);
    assert!(a.renew_consumer_slot(first.clone(), 10_000).await.unwrap());
    assert_eq!(claim(&b).await, None, "both leases still live");
    clock.advance_ms(6_000);
    let taken_over = claim(&b).await.expect("the lapsed lease's slot");
    assert_eq!(taken_over.slot, again.slot);
    assert_eq!(claim(&b).await, None, "the renewed lease still holds");
    assert!(
        !a.renew_consumer_slot(again.clone(), 10_000).await.unwrap(),
        "the lapsed lease is lost"
    );
    a.release_consumer_slot(again).await.unwrap();
    assert_eq!(claim(&a).await, None, "its late release freed nothing");

    // Slots above a lowered maximum are not handed out.
    a.release_consumer_slot(first).await.unwrap();
    b.release_consumer_slot(taken_over).await.unwrap();
    let only = a
        .claim_consumer_slot("w".into(), 1, 10_000)
        .await
        .unwrap()
        .expect("slot 0");
    assert_eq!(only.slot, 0);
    assert_eq!(
        b.claim_consumer_slot("w".into(), 1, 10_000).await.unwrap(),
        None
    );
}
