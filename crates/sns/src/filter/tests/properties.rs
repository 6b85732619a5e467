//! Properties over generated inputs: what every operator promises for any
//! value, and that no text makes parsing panic.

use proptest::prelude::*;
use serde_json::json;

use super::super::ip::{Ip, parse_cidr, parse_ip};
use super::super::{FilterPolicy, Scope};
use super::{number, on_attributes, on_body, string};

/// A short string of letters, digits and a few punctuation characters.
fn word() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ._-]{0,12}"
}

/// A policy key list with one rule, as JSON text.
fn policy(rule: serde_json::Value) -> String {
    json!({ "k": [rule] }).to_string()
}

proptest! {
    /// Docs ("anything-but … matches any … values that don't include any
    /// of the policy property values"): `anything-but` X never matches X and
    /// matches any other string, in both scopes.
    #[test]
    fn n4_anything_but_never_matches_what_it_excludes(x in word(), y in word()) {
        let text = policy(json!({"anything-but": [x.clone()]}));
        let on_attrs = on_attributes(&text);
        prop_assert!(!on_attrs.matches_attributes(&[string("k", &x)]));
        prop_assert_eq!(on_attrs.matches_attributes(&[string("k", &y)]), x != y);
        let in_body = on_body(&text);
        let (body_x, body_y) = (json!({"k": x}).to_string(), json!({"k": y}).to_string());
        prop_assert!(!in_body.matches_body(&body_x));
        prop_assert_eq!(in_body.matches_body(&body_y), x != y);
    }

    /// `anything-but` a number never matches that number however written.
    #[test]
    fn n4_anything_but_a_number_never_matches_it(n in -1_000_000_000_i64..1_000_000_000) {
        let policy = on_attributes(&policy(json!({"anything-but": n})));
        let (plain, point_zero, half) = (n.to_string(), format!("{n}.0"), format!("{n}.5"));
        prop_assert!(!policy.matches_attributes(&[number("k", &plain)]));
        prop_assert!(!policy.matches_attributes(&[number("k", &point_zero)]));
        prop_assert!(policy.matches_attributes(&[number("k", &half)]));
    }

    /// `prefix` P matches P+S, `suffix` S matches P+S, `anything-but` with
    /// prefix P (non-empty) never matches P+S.
    #[test]
    fn n4_prefix_and_suffix_match_what_they_start_and_end(p in word(), s in word()) {
        let value = format!("{p}{s}");
        let attribute = [string("k", &value)];
        let prefix = on_attributes(&policy(json!({"prefix": p})));
        let suffix = on_attributes(&policy(json!({"suffix": s})));
        prop_assert!(prefix.matches_attributes(&attribute));
        prop_assert!(suffix.matches_attributes(&attribute));
        if !p.is_empty() {
            let but = on_attributes(&policy(json!({"anything-but": {"prefix": p}})));
            prop_assert!(!but.matches_attributes(&attribute));
        }
    }

    /// An exact string matches itself and `equals-ignore-case` matches any
    /// casing of itself.
    #[test]
    fn n4_strings_match_themselves(x in word()) {
        let exact = on_attributes(&policy(json!(x)));
        prop_assert!(exact.matches_attributes(&[string("k", &x)]));
        let upper = x.to_uppercase();
        let ignore_case = on_body(&policy(json!({"equals-ignore-case": x})));
        let body = json!({"k": upper}).to_string();
        prop_assert!(ignore_case.matches_body(&body));
    }

    /// A range `> a, <= b` holds exactly the numbers in (a, b].
    #[test]
    fn n4_numeric_ranges_hold_what_is_between(
        a in -1000_i32..1000, width in 1_i32..1000, x in -3000_i32..3000,
    ) {
        let b = a + width;
        let policy = on_body(&policy(json!({"numeric": [">", a, "<=", b]})));
        let inside = a < x && x <= b;
        let (integer, float) = (json!({"k": x}).to_string(), json!({"k": f64::from(x)}).to_string());
        prop_assert_eq!(policy.matches_body(&integer), inside);
        prop_assert_eq!(policy.matches_body(&float), inside);
    }

    /// For any body, exactly one of `exists: true` and `exists: false`
    /// holds for a key.
    #[test]
    fn n4_exists_true_and_false_split_every_body(
        present in proptest::option::of(prop_oneof![
            word().prop_map(serde_json::Value::from),
            any::<i32>().prop_map(serde_json::Value::from),
            Just(serde_json::Value::Null),
            Just(json!([])),
            Just(json!({"x": 1})),
        ]),
    ) {
        let body = match present {
            Some(v) => json!({"k": v, "other": 1}),
            None => json!({"other": 1}),
        }
        .to_string();
        let yes = on_body(&policy(json!({"exists": true}))).matches_body(&body);
        let no = on_body(&policy(json!({"exists": false}))).matches_body(&body);
        prop_assert!(yes != no);
    }

    /// A dotted key matches the same value nested or dotted in the body.
    #[test]
    fn n4_dotted_keys_match_nested_and_dotted_bodies(a in "[a-z]{1,5}", b in "[a-z]{1,5}", v in word()) {
        let policy = on_body(&json!({ format!("{a}.{b}"): [v.clone()] }).to_string());
        let nested = json!({ a.clone(): { b.clone(): v.clone() } }).to_string();
        let dotted = json!({ format!("{a}.{b}"): v.clone() }).to_string();
        let in_arrays = json!({ a: [{ b: [v] }] }).to_string();
        prop_assert!(policy.matches_body(&nested));
        prop_assert!(policy.matches_body(&dotted));
        prop_assert!(policy.matches_body(&in_arrays));
    }

    /// An IPv4 block holds exactly the addresses that share its first
    /// `bits` bits.
    #[test]
    fn n4_cidr_blocks_hold_their_prefix(network in any::<u32>(), address in any::<u32>(), bits in 0_u32..32) {
        let dotted = |n: u32| std::net::Ipv4Addr::from_bits(n).to_string();
        let Ok(block) = parse_cidr(&format!("{}/{bits}", dotted(network))) else {
            return Err(TestCaseError::fail("block refused"));
        };
        let shift = 32 - bits;
        let expected = network.checked_shr(shift).unwrap_or(0) == address.checked_shr(shift).unwrap_or(0);
        prop_assert_eq!(block.contains(Ip::V4(address)), expected);
        prop_assert_eq!(parse_ip(&dotted(address)), Some(Ip::V4(address)));
    }

    /// No text makes parsing panic, in either scope; whatever is refused
    /// has a message.
    #[test]
    fn n4_parsing_never_panics(text in "\\PC{0,40}") {
        for scope in [Scope::MessageAttributes, Scope::MessageBody] {
            if let Err(e) = FilterPolicy::parse(&text, scope) {
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }

    /// Nor does JSON-ish text built from policy tokens; an accepted policy
    /// keeps its scope and matches without panicking.
    #[test]
    fn n4_parsing_policy_like_text_never_panics(
        parts in proptest::collection::vec(prop_oneof![
            Just("{"), Just("}"), Just("["), Just("]"), Just(","), Just(":"), Just("\"k\""),
            Just("\"$or\""), Just("\"numeric\""), Just("\">\""), Just("1"), Just("-"), Just("true"),
            Just("null"), Just("\"prefix\""), Just("\"anything-but\""), Just("\"cidr\""), Just("\"10.0.0.0/8\""),
        ], 0..30),
    ) {
        let text: String = parts.concat();
        for scope in [Scope::MessageAttributes, Scope::MessageBody] {
            match FilterPolicy::parse(&text, scope) {
                Ok(p) => {
                    prop_assert_eq!(p.scope(), scope);
                    let _ = p.matches_body(r#"{"k":1}"#) || p.matches_attributes(&[string("k", "1")]);
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }
}
