//! The runtime the generated wire types call: Query parameters decoded
//! into them ([`params`]), and their answers written as XML ([`xml`]), as
//! the Query protocol's JSON rendering ([`query_json`]) and as the JSON
//! protocol's body ([`json`]). The generated code (see `crates/codegen`)
//! knows each member's wire name, flattening and type; these functions
//! know how each kind of value travels.

mod json;
mod params;
mod query_json;
mod xml;

pub use json::{bounded_entries, write_json};
pub use params::{DecodeError, FromQuery, Params};
pub use query_json::{JsonObject, ToQueryJson};
pub use xml::{ToXml, XmlValue, xml_list, xml_map, xml_structure, xml_value};
