//! Authentication: SigV4 verification in front of the router (like Garage,
//! the signature check is separate from the API). A request either comes
//! out as an authenticated [`Principal`] (access key and account), which
//! the request context carries to the actions, or is refused with AWS's
//! answer for what is wrong. Storage never sees credentials.
//!
//! The signing arithmetic is the `sluice-sigv4` crate (the client signs
//! with the same functions); `verify.rs` holds what a request must carry
//! and the checks, in AWS's order and with AWS's words; `authenticator.rs`
//! the configured keys; `principal.rs`, `refusal.rs` and `hints.rs` what
//! a verification answers and logs. See docs/security.md.

pub mod access;
mod authenticator;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
mod hints;
mod principal;
pub mod rate;
mod refusal;
mod verify;

pub use access::Access;
pub use authenticator::{Authenticator, PreparedKeys};
pub use hints::{action_hint, queue_hint};
pub use principal::{Credential, Principal};
pub use rate::{Bucket, RateLimit};
pub use refusal::Refusal;
pub use verify::RequestParts;

#[cfg(test)]
mod tests;
