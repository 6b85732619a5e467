//! IP addresses and CIDR blocks for the `cidr` operator: [`parse_ip`]
//! reads an address the way AWS's rule engine does, [`parse_cidr`] reads a
//! block with the engine's error messages, [`Cidr::contains`] tests one.
//!
//! Recorded (recorded-cases.md 165–170, 209): `Malformed CIDR, one '/'
//! required`, `Malformed CIDR, mask bits must be an integer`,
//! `Nonstandard IP address: <ip>`; a non-compressed IPv6 address matches a
//! compressed block; `10.0.0.256` is no address. Not recorded, from the
//! engine (event-ruler's `CIDR.java`): `Malformed CIDR, mask bits must not
//! be negative`, `Invalid IP address: <ip>` for text that looks like an
//! address but is none, and the mask limits (`IPv4 mask bits must be < 32`,
//! `IPv6 mask bits must be < 128`: the engine refuses /32 and /128).

use std::net::{Ipv4Addr, Ipv6Addr};

/// An IP address as a number, by family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ip {
    /// An IPv4 address (also what an IPv4-mapped IPv6 address is).
    V4(u32),
    /// An IPv6 address.
    V6(u128),
}

/// The address `text` is, or `None`. Only text shaped like an address is
/// read, as the engine reads it: four dot-separated runs of digits, or hex
/// digits and colons with at least one colon. An IPv4-mapped IPv6 address
/// (`::ffff:a00:1`) is its IPv4 address, as Java's `InetAddress` has it.
pub(super) fn parse_ip(text: &str) -> Option<Ip> {
    if looks_like_v4(text) {
        text.parse::<Ipv4Addr>().ok().map(|a| Ip::V4(a.to_bits()))
    } else if looks_like_v6(text) {
        let address = text.parse::<Ipv6Addr>().ok()?;
        Some(match address.to_ipv4_mapped() {
            Some(v4) => Ip::V4(v4.to_bits()),
            None => Ip::V6(address.to_bits()),
        })
    } else {
        None
    }
}

/// The engine's IPv4 shape: `[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+`.
fn looks_like_v4(text: &str) -> bool {
    let mut parts = 0;
    for part in text.split('.') {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        parts += 1;
    }
    parts == 4
}

/// The engine's IPv6 shape: `[0-9a-fA-F:]*:[0-9a-fA-F:]*`.
fn looks_like_v6(text: &str) -> bool {
    text.contains(':') && text.bytes().all(|b| b.is_ascii_hexdigit() || b == b':')
}

/// A CIDR block: the addresses whose first `bits` bits are the network's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cidr {
    network: Ip,
    bits: u32,
}

/// The block `text` names (`10.0.0.0/24`, `2001:db8::/64`), or AWS's
/// message for why it is none. The checks run in the engine's order: one
/// `/`, an integer mask, a non-negative mask, an address, the mask's range.
pub(super) fn parse_cidr(text: &str) -> Result<Cidr, String> {
    let mut parts: Vec<&str> = text.split('/').collect();
    // Java's `split` drops trailing empty strings: "10.0.0.0/" is one part.
    while parts.last() == Some(&"") {
        parts.pop();
    }
    let [address, mask] = parts[..] else {
        return Err("Malformed CIDR, one '/' required".to_string());
    };
    let Some(bits) = parse_java_int(mask) else {
        return Err("Malformed CIDR, mask bits must be an integer".to_string());
    };
    let Ok(bits) = u32::try_from(bits) else {
        return Err("Malformed CIDR, mask bits must not be negative".to_string());
    };
    if !looks_like_v4(address) && !looks_like_v6(address) {
        return Err(format!("Nonstandard IP address: {address}"));
    }
    let Some(network) = parse_ip(address) else {
        return Err(format!("Invalid IP address: {address}"));
    };
    match network {
        Ip::V4(_) if bits > 31 => Err("IPv4 mask bits must be < 32".to_string()),
        Ip::V6(_) if bits > 127 => Err("IPv6 mask bits must be < 128".to_string()),
        _ => Ok(Cidr { network, bits }),
    }
}

/// Java's `Integer.parseInt`: an optional sign, ASCII digits, within `i32`.
fn parse_java_int(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: i64 = text.strip_prefix('+').unwrap_or(text).parse().ok()?;
    i32::try_from(value).ok().map(i64::from)
}

impl Cidr {
    /// Whether `ip` is in the block. The block starts at the network's
    /// first address whatever host bits the policy wrote (`10.0.0.5/24`
    /// covers `10.0.0.0`), as a CIDR block does.
    pub(super) fn contains(self, ip: Ip) -> bool {
        match (self.network, ip) {
            (Ip::V4(network), Ip::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - self.bits).unwrap_or(0);
                network & mask == ip & mask
            }
            (Ip::V6(network), Ip::V6(ip)) => {
                let mask = u128::MAX.checked_shl(128 - self.bits).unwrap_or(0);
                network & mask == ip & mask
            }
            _ => false,
        }
    }
}
