//! Puts together the requests one node receives for the same queue at the
//! same moment, so that one statement serves them all.
//!
//! Under load PostgreSQL spends most of its time per statement, not per
//! row: executor start-up, the commit and its wait for the WAL flush, the
//! round trip and the context switches around it. A lane (one queue, one
//! kind of action) lets at most [`IN_FLIGHT`] statements run at once;
//! requests that arrive meanwhile wait, and when a statement ends the
//! first of them leads the next one, for itself and every request waiting
//! behind it. A request alone on its lane runs at once, as before: the
//! combining costs nothing when the node is not busy.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::hash::Hash;

use parking_lot::Mutex;
use sluice_broker::EngineError;
use tokio::sync::oneshot;

/// Statements one lane runs at once. One: measured on 2 cores, one
/// statement per lane gave about 10 % more throughput than two and 20 %
/// more than four (fewer, larger statements), and receives on one node no
/// longer skip each other's locked rows. The other kinds of action, other
/// queues and other nodes still run beside it.
pub(crate) const IN_FLIGHT: usize = 1;

/// Most requests one statement serves.
pub(crate) const MAX_COMBINED: usize = 64;

/// What a waiting request is told.
enum Turn<R> {
    /// Another request's statement served it.
    Done(Result<R, EngineError>),
    /// It leads the next statement.
    Lead,
}

/// How a request starts: at once, or in line.
enum Start<T, R> {
    Now(T),
    Wait(u64, oneshot::Receiver<Turn<R>>),
}

struct Waiting<T, R> {
    id: u64,
    input: T,
    /// Taken when the request is told to lead: it then takes its own input.
    reply: Option<oneshot::Sender<Turn<R>>>,
}

struct Lane<T, R> {
    running: usize,
    waiting: VecDeque<Waiting<T, R>>,
}

impl<T, R> Default for Lane<T, R> {
    fn default() -> Self {
        Self {
            running: 0,
            waiting: VecDeque::new(),
        }
    }
}

/// Every lane, and the number the next request takes.
struct Lanes<K, T, R> {
    next_id: u64,
    by_key: HashMap<K, Lane<T, R>>,
}

/// The lanes of one kind of action, by key (a queue, and whatever else a
/// statement must share).
pub(crate) struct Combiner<K, T, R> {
    lanes: Mutex<Lanes<K, T, R>>,
}

impl<K, T, R> Default for Combiner<K, T, R> {
    fn default() -> Self {
        Self {
            lanes: Mutex::new(Lanes {
                next_id: 0,
                by_key: HashMap::new(),
            }),
        }
    }
}

/// Gives a lane's slot back when its statement ends, however it ends (a
/// request whose client goes away is dropped mid-statement): the next
/// waiting request takes the slot, or the slot is freed.
struct Slot<'a, K: Hash + Eq + Clone, T, R> {
    combiner: &'a Combiner<K, T, R>,
    key: K,
}

impl<K: Hash + Eq + Clone, T, R> Drop for Slot<'_, K, T, R> {
    fn drop(&mut self) {
        let mut guard = self.combiner.lanes.lock();
        hand_on(&mut guard.by_key, &self.key);
    }
}

/// Takes a waiting request out of its lane if it is dropped before its
/// turn: one told to lead but gone hands its slot on.
struct Place<'a, K: Hash + Eq + Clone, T, R> {
    combiner: &'a Combiner<K, T, R>,
    key: K,
    id: u64,
    armed: bool,
}

impl<K: Hash + Eq + Clone, T, R> Drop for Place<'_, K, T, R> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut guard = self.combiner.lanes.lock();
        let Some(lane) = guard.by_key.get_mut(&self.key) else {
            return;
        };
        let Some(at) = lane.waiting.iter().position(|w| w.id == self.id) else {
            return;
        };
        let told_to_lead = lane.waiting[at].reply.is_none();
        lane.waiting.remove(at);
        if told_to_lead {
            hand_on(&mut guard.by_key, &self.key);
        }
    }
}

/// Passes a finished statement's slot to the first waiting request still
/// there and not already told to lead, or frees it.
fn hand_on<K: Hash + Eq, T, R>(lanes: &mut HashMap<K, Lane<T, R>>, key: &K) {
    let Some(lane) = lanes.get_mut(key) else {
        return;
    };
    let mut i = 0;
    while i < lane.waiting.len() {
        let Some(reply) = lane.waiting[i].reply.take() else {
            i += 1;
            continue;
        };
        if reply.send(Turn::Lead).is_ok() {
            return;
        }
        // Gone meanwhile: it leaves the line.
        lane.waiting.remove(i);
    }
    lane.running -= 1;
    if lane.running == 0 && lane.waiting.is_empty() {
        lanes.remove(key);
    }
}

impl<K: Hash + Eq + Clone, T, R> Combiner<K, T, R> {
    /// Runs `input` through `statement`, alone or with the other requests
    /// waiting on the same lane. `statement` gets the inputs in arrival
    /// order and returns one result per input, in the same order; an
    /// error of its own is every request's.
    pub(crate) async fn run<F, Fut>(&self, key: K, input: T, statement: F) -> Result<R, EngineError>
    where
        F: FnOnce(Vec<T>) -> Fut,
        Fut: Future<Output = Result<Vec<Result<R, EngineError>>, EngineError>>,
    {
        let start = {
            let mut guard = self.lanes.lock();
            guard.next_id += 1;
            let id = guard.next_id;
            let lane = guard.by_key.entry(key.clone()).or_default();
            if lane.running < IN_FLIGHT {
                lane.running += 1;
                Start::Now(input)
            } else {
                let (reply, turn) = oneshot::channel();
                lane.waiting.push_back(Waiting {
                    id,
                    input,
                    reply: Some(reply),
                });
                Start::Wait(id, turn)
            }
        };
        let (inputs, replies, own_index, slot) = match start {
            Start::Now(input) => {
                let slot = Slot {
                    combiner: self,
                    key,
                };
                (vec![input], vec![None], 0, slot)
            }
            Start::Wait(own, turn) => {
                let mut place = Place {
                    combiner: self,
                    key: key.clone(),
                    id: own,
                    armed: true,
                };
                match turn.await {
                    Ok(Turn::Done(result)) => {
                        place.armed = false;
                        return result;
                    }
                    Ok(Turn::Lead) => {}
                    // The leader that held this request went away.
                    Err(_) => return Err(gone()),
                }
                place.armed = false;
                let slot = Slot {
                    combiner: self,
                    key: key.clone(),
                };
                let mut guard = self.lanes.lock();
                let lane = guard.by_key.entry(key).or_default();
                // Its own input, then the requests behind it that are
                // neither leading a statement nor gone.
                let mut inputs = Vec::new();
                let mut replies = Vec::new();
                let mut own_index = None;
                let mut kept = VecDeque::with_capacity(lane.waiting.len());
                for w in lane.waiting.drain(..) {
                    if w.id == own {
                        own_index = Some(inputs.len());
                        inputs.push(w.input);
                        replies.push(None);
                    } else if inputs.len() < MAX_COMBINED
                        && w.reply.as_ref().is_some_and(|r| !r.is_closed())
                    {
                        inputs.push(w.input);
                        replies.push(w.reply);
                    } else if w.reply.as_ref().is_none_or(|r| !r.is_closed()) {
                        kept.push_back(w);
                    }
                }
                lane.waiting = kept;
                drop(guard);
                let Some(own_index) = own_index else {
                    // Cannot happen: a request told to lead stays in line
                    // until it takes its own input.
                    return Err(EngineError::Storage(
                        "combined request lost its place".into(),
                    ));
                };
                (inputs, replies, own_index, slot)
            }
        };
        let count = inputs.len();
        let outcome = statement(inputs).await;
        drop(slot);
        let mut results: Vec<Result<R, EngineError>> = match outcome {
            Ok(results) if results.len() == count => results,
            Ok(_) => (0..count)
                .map(|_| {
                    Err(EngineError::Storage(
                        "a combined statement lost a result".into(),
                    ))
                })
                .collect(),
            Err(e) => (0..count).map(|_| Err(e.clone())).collect(),
        };
        let mine = std::mem::replace(&mut results[own_index], Err(gone()));
        for (result, reply) in results.into_iter().zip(replies) {
            // A request gone meanwhile has no one to tell.
            if let Some(reply) = reply {
                let _ = reply.send(Turn::Done(result));
            }
        }
        mine
    }
}

/// The answer of a request whose statement's leader was dropped before it
/// finished: whether the statement ran is unknown, as after a lost
/// connection.
fn gone() -> EngineError {
    EngineError::Unavailable("The request could not be completed; retry it.".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Requests that arrive while the lane's statements run are served by
    /// fewer statements than requests, each with its own result.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waiting_requests_share_a_statement() {
        let combiner = Arc::new(Combiner::<i64, u32, u32>::default());
        let statements = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for n in 0..40u32 {
            let combiner = combiner.clone();
            let statements = statements.clone();
            tasks.push(tokio::spawn(async move {
                combiner
                    .run(1, n, |inputs| async move {
                        statements.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        Ok(inputs.into_iter().map(|i| Ok(i * 10)).collect())
                    })
                    .await
            }));
        }
        for (n, task) in tasks.into_iter().enumerate() {
            assert_eq!(task.await.unwrap(), Ok(n as u32 * 10));
        }
        let ran = statements.load(Ordering::SeqCst);
        assert!(ran < 40, "{ran} statements for 40 requests");
        assert!(combiner.lanes.lock().by_key.is_empty(), "lane left behind");
    }

    /// A statement's own error reaches every request it served.
    #[tokio::test]
    async fn a_statement_error_reaches_every_request() {
        let combiner = Combiner::<i64, u32, u32>::default();
        let result = combiner
            .run(1, 7, |_| async { Err(EngineError::Storage("down".into())) })
            .await;
        assert_eq!(result, Err(EngineError::Storage("down".into())));
        assert!(combiner.lanes.lock().by_key.is_empty());
    }

    /// A leader dropped mid-statement frees its slot: the lane keeps
    /// serving requests.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_leader_frees_its_slot() {
        let combiner = Arc::new(Combiner::<i64, u32, u32>::default());
        for _ in 0..IN_FLIGHT {
            let c = combiner.clone();
            let stuck = tokio::spawn(async move { c.run(1, 0, |_| std::future::pending()).await });
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            stuck.abort();
            let _ = stuck.await;
        }
        let served = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            combiner.run(1, 3, |inputs| async move {
                Ok(inputs.into_iter().map(|i| Ok(i + 1)).collect())
            }),
        )
        .await;
        assert_eq!(served, Ok(Ok(4)));
    }
}
