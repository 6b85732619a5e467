//! Queues of other regions (rule W3): the server stores a queue of another
//! region under the key `<region>/<account>/<name>`; engines keep such keys
//! apart from same-named queues and resolve dead-letter ARNs in the
//! source's own region.

use super::*;
use crate::Redrive;

/// W3, R2, R7: `orders` in the server's region and in `eu-west-1` are two
/// queues; a message dead-lettered in eu-west-1 lands in eu-west-1's DLQ,
/// names its eu-west-1 source, and a redrive brings it back there.
pub async fn w3_regional_queues_and_their_dead_letter_queues<H: Harness>(h: &H) {
    let west = |name: &str| format!("eu-west-1/000000000000/{name}");
    create(h, "orders", &[]).await;
    create(h, &west("dlq"), &[]).await;
    let policy =
        r#"{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:000000000000:dlq","maxReceiveCount":1}"#;
    create(h, &west("orders"), &[("RedrivePolicy", policy)]).await;

    send(h, &west("orders"), &["west"]).await;
    assert!(
        receive(h, "orders", 10).await.is_empty(),
        "regions are apart"
    );
    assert_eq!(
        bodies(&receive_vt(h, &west("orders"), 1, 0).await),
        ["west"]
    );
    assert!(
        receive(h, &west("orders"), 1).await.is_empty(),
        "moved to the DLQ"
    );

    let dead = receive_vt(h, &west("dlq"), 1, 0).await;
    assert_eq!(bodies(&dead), ["west"]);
    let source = dead[0]
        .system_attributes
        .get(crate::moves::DEAD_LETTER_SOURCE_ARN)
        .map(|v| v.value.clone());
    assert_eq!(
        source,
        Some(sluice_core::message::AttributeValue::String(
            "arn:aws:sqs:eu-west-1:000000000000:orders".into()
        ))
    );
    let outcome = h
        .broker()
        .redrive_messages(
            &west("dlq"),
            &Redrive {
                max: 10,
                ..Default::default()
            },
        )
        .await
        .expect("redrive");
    assert_eq!(outcome.moved, 1, "{outcome:?}");
    assert_eq!(bodies(&receive(h, &west("orders"), 10).await), ["west"]);
    assert!(receive(h, "orders", 10).await.is_empty());
}
