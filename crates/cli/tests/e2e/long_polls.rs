//! `--max-long-polls` (rule H5): beyond the cap, a receive that would wait
//! answers at once; a place given back is taken by the next long poll.

use std::time::{Duration, Instant};

use crate::common::{SluiceProcess, create_queue};

/// The value of a metric line `name value` in the exposition.
async fn metric(server: &SluiceProcess, name: &str) -> u64 {
    let raw = server.raw();
    let text = tokio::task::spawn_blocking(move || raw.request("GET", "/metrics", &[], b""))
        .await
        .unwrap()
        .body;
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{name} not in {text}"))
}

async fn until_waiting(server: &SluiceProcess, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while metric(server, "sluice_long_polls_waiting").await != n {
        assert!(Instant::now() < deadline, "never {n} long polls waiting");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// H5: with a cap of 2, two long polls wait; a third asks to wait 20 s and
/// answers at once with no messages (counted as capped); once a send
/// wakes one of the two, a new long poll waits again and is woken by a
/// send, not answered early.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h5_long_polls_beyond_the_cap_answer_at_once() {
    let server = SluiceProcess::start(&["--in-memory", "--max-long-polls", "2"]);
    let sqs = server.sdk();
    let url = create_queue(&sqs, "polled").await;
    let poll = |wait: i32| {
        let (sqs, url) = (sqs.clone(), url.clone());
        tokio::spawn(async move {
            let began = Instant::now();
            let got = sqs
                .receive_message()
                .queue_url(&url)
                .wait_time_seconds(wait)
                .send()
                .await
                .expect("receive");
            (got.messages().len(), began.elapsed())
        })
    };
    let first = poll(20);
    let second = poll(20);
    until_waiting(&server, 2).await;
    assert_eq!(metric(&server, "sluice_long_polls_capped_total").await, 0);

    let (count, took) = poll(20).await.unwrap();
    assert_eq!(count, 0, "nothing was sent");
    // Far below the 20 s asked for: it did not wait.
    assert!(took < Duration::from_secs(10), "the third waited {took:?}");
    assert_eq!(metric(&server, "sluice_long_polls_capped_total").await, 1);
    assert_eq!(metric(&server, "sluice_long_polls_waiting").await, 2);

    // A send wakes one of the two; its place is free again.
    sqs.send_message()
        .queue_url(&url)
        .message_body("one")
        .send()
        .await
        .unwrap();
    until_waiting(&server, 1).await;
    let third = poll(20);
    until_waiting(&server, 2).await;
    for body in ["two", "three"] {
        sqs.send_message()
            .queue_url(&url)
            .message_body(body)
            .send()
            .await
            .unwrap();
    }
    let mut received = 0;
    for handle in [first, second, third] {
        let (count, _) = handle.await.unwrap();
        received += count;
    }
    assert_eq!(received, 3, "every long poll that waited got a message");
    assert_eq!(metric(&server, "sluice_long_polls_capped_total").await, 1);
}
