//! grail-lang: the grail policy language's grammar, syntax tree and parser.
//!
//! This crate knows nothing of salsa, documents, the file system or editors.
//! Parsing never fails: [`parse`] returns a tree and a list of errors.

pub mod ast;
pub mod format;
pub mod parser;
pub mod print;

pub use format::format;
pub use parser::{Comment, ParseError, Parsed, comments, parse};
