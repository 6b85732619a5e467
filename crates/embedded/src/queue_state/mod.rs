//! One queue's in-memory index: which messages are ready, delayed or in
//! flight, and when each next changes state.
//!
//! Pure and synchronous: it takes the current time as an argument and does
//! no I/O, so the engine can hold its lock only for these calls and hand the
//! resulting changes to the journal.

mod cache;
mod delivery;
mod entry;
mod expired;
mod state;
#[cfg(test)]
mod tests;
mod timers;

pub use delivery::DeliveryRules;
pub use entry::{Attempt, Order, Phase, Removed};
pub use state::QueueState;
