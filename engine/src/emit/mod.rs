//! Compile targets (`grail compile`): what a policy, or a deployment checked
//! against it, becomes for tools that do not run grail.
//!
//! - [`cedar`]: the answers of the admission questions for one deployment, as
//!   a Cedar schema, policy set and entities;
//! - [`ir`]: the lowered policy as versioned JSON (`docs/ir.md`);
//! - [`json_schema`]: a JSON Schema per document kind.
//!
//! Every target is a pure function of its inputs and returns text or JSON;
//! the command line writes the files. Output is deterministic: the same
//! inputs give the same bytes.

pub mod cedar;
pub mod ir;
pub mod json_schema;
pub mod tree;

use serde_json::{Value, json};

use crate::hir::Policy;
use crate::value::{Val, ValKind};

/// A literal as JSON: scalars as themselves, a variant by its name, lists as arrays.
fn literal(policy: &Policy, v: &Val) -> Value {
    match &v.kind {
        ValKind::Bool(b) => json!(b),
        ValKind::Int(i) => json!(i),
        ValKind::Str(s) | ValKind::Id(s) => json!(s.as_ref()),
        ValKind::Enum(e, x) => json!(policy.variant_name(*e, *x)),
        ValKind::List(items) => Value::Array(items.iter().map(|x| literal(policy, x)).collect()),
        ValKind::Map(entries) => {
            Value::Object(entries.iter().map(|(k, x)| (k.display(policy), literal(policy, x))).collect())
        }
        _ => Value::Null,
    }
}

/// JSON as text: pretty, with a final newline.
pub fn to_text(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}
