//! Which receipt handle may change a message's visibility (rules V5,
//! V20): the same answer from every engine, whatever holds the message's
//! delivery state. NackMessage applies the FIFO form of the rule to every
//! queue.

use sluice_core::limits::MAX_VISIBILITY_TIMEOUT;
use sluice_core::receipt::ReceiptHandle;

use crate::error::EngineError;

/// A message's delivery state as its engine holds it now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// How many times it was received.
    pub receive_count: u32,
    /// Whether a delivery's visibility timeout is still running.
    pub in_flight: bool,
}

/// `handle` decoded, if it is a handle of a delivery from queue `queue_id`
/// (else `ReceiptHandleIsInvalid`).
pub fn decode_for_queue(handle: &str, queue_id: u64) -> Result<ReceiptHandle, EngineError> {
    ReceiptHandle::decode(handle)
        .filter(|rh| rh.queue_id == queue_id && rh.receive > 0)
        .ok_or_else(|| EngineError::ReceiptHandleIsInvalid {
            handle: handle.to_owned(),
        })
}

/// Whether `rh`, decoded from `handle`, may change the visibility of the
/// message it names, whose delivery state is `message` (`None`: the
/// message is gone). In a FIFO queue (`standard` false) only the latest
/// handle of a message in flight may (V5); in a standard queue any handle
/// of a message in flight may, and so may the latest once its visibility
/// ended (V20). A handle from a later delivery than the message had is
/// not one the server issued.
pub fn check_visibility_change(
    handle: &str,
    rh: &ReceiptHandle,
    message: Option<Delivery>,
    standard: bool,
) -> Result<(), EngineError> {
    let Some(message) = message else {
        return Err(EngineError::MessageGone {
            handle: handle.to_owned(),
        });
    };
    if rh.receive > message.receive_count {
        return Err(EngineError::ReceiptHandleIsInvalid {
            handle: handle.to_owned(),
        });
    }
    let latest = rh.receive == message.receive_count;
    let allowed = if standard {
        message.in_flight || latest
    } else {
        message.in_flight && latest
    };
    if allowed {
        Ok(())
    } else {
        Err(EngineError::MessageNotInflight)
    }
}

/// Whether the visibility change `timeout` (seconds) made at `now` (ms)
/// keeps the message of handle `rh` invisible no later than 12 hours after
/// the receive that issued it (rule V26; SQS counts from the receive, so a
/// heartbeat cannot extend past it). A handle whose receive time is not
/// known (issued before handles carried it) is not limited.
pub fn check_total_visibility(
    rh: &ReceiptHandle,
    now: u64,
    timeout: u32,
) -> Result<(), EngineError> {
    let limit = rh.received_at + u64::from(MAX_VISIBILITY_TIMEOUT) * 1000;
    let until = now + u64::from(timeout) * 1000;
    if rh.received_at > 0 && until > limit {
        Err(EngineError::TotalVisibilityBeyondLimit { timeout })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle(receive: u32) -> (String, ReceiptHandle) {
        let rh = ReceiptHandle {
            queue_id: 7,
            seq: 3,
            receive,
            received_at: 1_000_000,
        };
        (rh.encode(), rh)
    }

    /// V26: up to 12 hours after the receive, not a millisecond more; a
    /// handle without its receive time is not limited.
    #[test]
    fn v26_total_visibility_is_twelve_hours_from_the_receive() {
        let (_, rh) = handle(1);
        let twelve_hours = 43_200_000;
        assert_eq!(check_total_visibility(&rh, 1_000_000, 43_200), Ok(()));
        assert_eq!(
            check_total_visibility(&rh, 1_001_000, 43_200),
            Err(EngineError::TotalVisibilityBeyondLimit { timeout: 43_200 })
        );
        assert_eq!(
            check_total_visibility(&rh, 1_000_000 + twelve_hours - 60_000, 60),
            Ok(())
        );
        assert_eq!(
            check_total_visibility(&rh, 1_000_000 + twelve_hours - 60_000, 61),
            Err(EngineError::TotalVisibilityBeyondLimit { timeout: 61 })
        );
        let unknown = ReceiptHandle {
            received_at: 0,
            ..rh
        };
        assert_eq!(
            check_total_visibility(&unknown, u64::MAX / 2, 43_200),
            Ok(())
        );
    }

    fn check(receive: u32, count: u32, in_flight: bool, standard: bool) -> Result<(), EngineError> {
        let (text, rh) = handle(receive);
        let message = Delivery {
            receive_count: count,
            in_flight,
        };
        check_visibility_change(&text, &rh, Some(message), standard)
    }

    /// V5: another queue's handle, a handle of no delivery and garbage are
    /// invalid; a gone message is named.
    #[test]
    fn v5_handles_of_other_queues_and_gone_messages_are_refused() {
        let (text, rh) = handle(1);
        assert_eq!(decode_for_queue(&text, 7).unwrap(), rh);
        for (bad, queue) in [(text.as_str(), 8), ("garbage", 7)] {
            assert!(matches!(
                decode_for_queue(bad, queue),
                Err(EngineError::ReceiptHandleIsInvalid { .. })
            ));
        }
        let (never, _) = handle(0);
        assert!(
            decode_for_queue(&never, 7).is_err(),
            "receive 0 issues none"
        );
        assert!(matches!(
            check_visibility_change(&text, &rh, None, true),
            Err(EngineError::MessageGone { .. })
        ));
        assert!(matches!(
            check(3, 2, true, true),
            Err(EngineError::ReceiptHandleIsInvalid { .. })
        ));
    }

    /// V5 in a FIFO queue: only the latest handle, while in flight.
    #[test]
    fn v5_fifo_takes_only_the_latest_handle_in_flight() {
        assert!(check(2, 2, true, false).is_ok());
        for (receive, in_flight) in [(1, true), (2, false)] {
            assert!(matches!(
                check(receive, 2, in_flight, false),
                Err(EngineError::MessageNotInflight)
            ));
        }
    }

    /// V20: a standard queue also takes an older handle while a later
    /// delivery is in flight, and the latest once its visibility ended,
    /// but not an older one then.
    #[test]
    fn v20_standard_takes_older_handles_in_flight_and_the_latest_after() {
        assert!(check(1, 2, true, true).is_ok());
        assert!(check(2, 2, false, true).is_ok());
        assert!(matches!(
            check(1, 2, false, true),
            Err(EngineError::MessageNotInflight)
        ));
    }
}
