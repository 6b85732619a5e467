//! Idempotency records as every engine keeps them (rule I1): a key is
//! claimed by one caller at a time, completed with a result that later
//! claims read, released for the next claim, taken over when its claimer's
//! time runs out, and forgotten after its TTL counted from the completion.

use sluice_core::Clock;

use super::Harness;
use crate::idempotency::{Claim, ClaimStatus, IdempotencyKeys};

const CLAIM: Claim = Claim {
    ttl_ms: 60_000,
    in_progress_ms: 10_000,
};

async fn claim<H: Harness>(h: &H, key: &str) -> ClaimStatus {
    h.broker()
        .claim_idempotency_key(key, CLAIM)
        .await
        .expect("claim")
}

/// I1: the first claim owns the key, the next ones see it in progress
/// until it is completed; then every claim reads the result, until the
/// TTL (counted from the completion) has passed.
pub async fn i1_a_key_is_claimed_once_and_completed_with_its_result<H: Harness>(h: &H) {
    let start = h.clock().now();
    let completed = async |key: &str| {
        let keys = [key.to_string(), "acct/never".to_string()];
        let answer = h.broker().idempotency_keys_completed(&keys).await;
        let answer = answer.expect("completed?");
        assert!(!answer[1], "a key never claimed is not completed");
        answer[0]
    };
    let first = claim(h, "acct/order-1").await;
    assert!(!completed("acct/order-1").await, "claimed is not completed");
    assert_eq!(
        first,
        ClaimStatus::Claimed {
            in_progress_until: start + 10_000
        }
    );
    h.clock().advance_secs(3);
    assert_eq!(
        claim(h, "acct/order-1").await,
        ClaimStatus::InProgress {
            in_progress_until: start + 10_000
        }
    );
    assert_eq!(
        claim(h, "acct/order-2").await.name(),
        "CLAIMED",
        "keys apart"
    );
    let done = h
        .broker()
        .complete_idempotency_key("acct/order-1", "charged 42".into());
    assert!(done.await.expect("complete"));
    h.clock().advance_secs(59);
    assert_eq!(
        claim(h, "acct/order-1").await,
        ClaimStatus::Completed {
            result: "charged 42".into()
        },
        "62 s after the claim, 59 after the completion"
    );
    assert!(completed("acct/order-1").await);
    assert!(!completed("acct/order-2").await, "in progress");
    assert!(!completed("acct/none").await, "never claimed");
    let again = h
        .broker()
        .complete_idempotency_key("acct/order-1", "twice".into());
    assert!(!again.await.expect("complete"), "completed once");
    assert!(
        !h.broker()
            .release_idempotency_key("acct/order-1")
            .await
            .expect("release"),
        "a completed key keeps its result"
    );
    h.clock().advance_secs(1);
    assert!(!completed("acct/order-1").await, "forgotten");
    assert_eq!(
        claim(h, "acct/order-1").await.name(),
        "CLAIMED",
        "forgotten"
    );
}

/// I1: a released key is claimed again at once; a claimer that neither
/// completes nor releases in time loses the key to the next claim, and
/// completing or releasing a key nobody claimed is refused.
pub async fn i1_release_frees_a_key_and_a_timed_out_claim_is_taken_over<H: Harness>(h: &H) {
    let b = h.broker();
    assert!(
        !b.release_idempotency_key("acct/none")
            .await
            .expect("release")
    );
    assert!(
        !b.complete_idempotency_key("acct/none", String::new())
            .await
            .expect("complete")
    );
    assert_eq!(claim(h, "acct/job").await.name(), "CLAIMED");
    assert!(
        b.release_idempotency_key("acct/job")
            .await
            .expect("release")
    );
    assert!(
        !b.release_idempotency_key("acct/job")
            .await
            .expect("release")
    );
    assert_eq!(claim(h, "acct/job").await.name(), "CLAIMED", "released");
    h.clock().advance_secs(10);
    assert_eq!(claim(h, "acct/job").await.name(), "CLAIMED", "taken over");
    assert_eq!(claim(h, "acct/job").await.name(), "IN_PROGRESS");
    // The first claimer, late, still completes: nobody else finished it.
    assert!(
        b.complete_idempotency_key("acct/job", "late".into())
            .await
            .expect("complete")
    );
    assert_eq!(
        claim(h, "acct/job").await,
        ClaimStatus::Completed {
            result: "late".into()
        }
    );
}

/// I1: of many concurrent claims of one key, exactly one owns it.
pub async fn i1_concurrent_claims_of_a_key_claim_it_once<H: Harness>(h: &H) {
    let claims = (0..16).map(|_| {
        let b = h.broker().clone();
        tokio::spawn(async move { b.claim_idempotency_key("acct/race", CLAIM).await })
    });
    let mut claimed = 0;
    for c in claims {
        match c.await.expect("task").expect("claim") {
            ClaimStatus::Claimed { .. } => claimed += 1,
            ClaimStatus::InProgress { .. } => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(claimed, 1);
}
