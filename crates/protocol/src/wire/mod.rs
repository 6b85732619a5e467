//! The runtime the generated wire types call: Query parameters decoded
//! into them ([`params`]), and their answers written as XML ([`xml`]) and
//! as JSON ([`json_out`]: the JSON protocol's body, or the Query protocol
//! rendered in JSON); batches bounded while parsed ([`json`]). The generated code (see `crates/codegen`)
//! knows each member's wire name, flattening and type; these functions
//! know how each kind of value travels.

mod json;
mod json_out;
mod params;
mod xml;

pub use json::{TOO_MANY_ENTRIES, bounded_entries};
pub use json_out::{JsonObject, JsonStyle, ToJson};
pub use params::{DecodeError, FromQuery, Params};
pub use xml::{ToXml, XmlValue, xml_list, xml_map, xml_structure, xml_value};
