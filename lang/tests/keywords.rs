//! `parser::RESERVED` (which the editor's highlighting and the parser's
//! messages read) agrees with the grammar's `keyword` rule: each of its
//! words is refused as a name, the same word with a letter more is not,
//! and the contextual keywords are names outside their place.

#[test]
fn every_reserved_word_is_refused_as_a_name_and_a_near_word_is_not() {
    for word in grail_lang::parser::RESERVED {
        let parsed = grail_lang::parse(&format!("fn {word}(x) = x\n"));
        assert!(!parsed.errors.is_empty(), "`{word}` is accepted as a name");
        // The same word with a letter more is a name like any other.
        let parsed = grail_lang::parse(&format!("fn {word}s(x) = x\n"));
        assert!(parsed.errors.is_empty(), "`{word}s` is refused: {:?}", parsed.errors);
    }
    // Contextual keywords are names outside their place.
    for word in ["layers", "default", "table", "row"] {
        let parsed = grail_lang::parse(&format!("fn {word}(x) = x\n"));
        assert!(parsed.errors.is_empty(), "`{word}` is refused as a name: {:?}", parsed.errors);
    }
}
